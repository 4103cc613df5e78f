/* A plugin that is broken on purpose, for tests/plugin_backend_test.cc: how it is broken is read
 * from the environment variable SPMDSIM_BROKEN_PLUGIN when spmdsim loads it:
 *   wrong_abi      its table says ABI version 2
 *   null_function  its table has no permute
 *   refuses        its entry point returns NULL with a message
 *   bad_order      its native_order is no reduction order
 *   fails          all_reduce returns 3 with a message on rank 1
 *   hangs          all_reduce never returns on rank 0
 *   bad_bool       all_gather writes the byte 7 into bool results
 * Otherwise its operations return at once without moving data: tests only load it and call it
 * until it breaks.
 * Built a second time with BROKEN_PLUGIN_NO_ENTRY: a library whose entry point has another name. */
#define _POSIX_C_SOURCE 200809L /* pthreads and nanosleep under -std=c11 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A misspelt entry point, as a plugin without the right one would have (the header's declaration
 * is renamed with it). */
#ifdef BROKEN_PLUGIN_NO_ENTRY
#define spmdsim_plugin_entry spmdsim_plugin_entry_v1
#endif

#include "backends/plugin/spmdsim_plugin.h"

static const struct spmdsim_host* g_host;

static int broken(const char* how) {
  const char* mode = getenv("SPMDSIM_BROKEN_PLUGIN");
  return mode != NULL && strcmp(mode, how) == 0;
}

struct spmdsim_group {
  int size;
};

static int create_group(int size, const int* device_ids, struct spmdsim_group** out) {
  (void)device_ids;
  struct spmdsim_group* group = malloc(sizeof *group);
  if (group == NULL) return 1;
  group->size = size;
  *out = group;
  return 0;
}

static void destroy_group(struct spmdsim_group* group) { free(group); }

static int all_reduce(struct spmdsim_group* group, int rank, spmdsim_dtype dtype,
                      spmdsim_reduce_op op, const void* send, void* recv, size_t count) {
  (void)group; (void)dtype; (void)op;
  if (broken("fails") && rank == 1) {
    g_host->set_error("broken plugin: rank 1 refuses to reduce");
    return 3;
  }
  if (broken("hangs") && rank == 0) {
    for (;;) {
      const struct timespec second = {1, 0};
      nanosleep(&second, NULL);
    }
  }
  memcpy(recv, send, count * spmdsim_dtype_size_bytes(dtype));
  return 0;
}

static int all_gather(struct spmdsim_group* group, int rank, spmdsim_dtype dtype,
                      const void* send, void* recv, size_t send_count) {
  (void)rank; (void)send;
  const size_t bytes = send_count * (size_t)group->size * spmdsim_dtype_size_bytes(dtype);
  memset(recv, broken("bad_bool") ? 7 : 0, bytes);
  return 0;
}

static int reduce_scatter(struct spmdsim_group* group, int rank, spmdsim_dtype dtype,
                          spmdsim_reduce_op op, const void* send, void* recv, size_t recv_count) {
  (void)group; (void)rank; (void)dtype; (void)op; (void)send; (void)recv; (void)recv_count;
  return 0;
}

static int all_to_all(struct spmdsim_group* group, int rank, spmdsim_dtype dtype,
                      const void* send, void* recv, size_t block_count) {
  (void)group; (void)rank; (void)dtype; (void)send; (void)recv; (void)block_count;
  return 0;
}

static int permute(struct spmdsim_group* group, int rank, spmdsim_dtype dtype, const void* send,
                   void* recv, size_t count, int send_to, int recv_from) {
  (void)group; (void)rank; (void)dtype; (void)send; (void)recv; (void)count; (void)send_to;
  (void)recv_from;
  return 0;
}

const struct spmdsim_plugin* spmdsim_plugin_entry(const struct spmdsim_host* host) {
  static struct spmdsim_plugin plugin = {
      .abi_version = SPMDSIM_PLUGIN_ABI_VERSION,
      .name = "broken",
      .native_order = NULL,
      .create_group = create_group,
      .destroy_group = destroy_group,
      .all_reduce = all_reduce,
      .all_gather = all_gather,
      .reduce_scatter = reduce_scatter,
      .all_to_all = all_to_all,
      .permute = permute,
  };
  g_host = host;
  if (broken("refuses")) {
    host->set_error("broken plugin: this machine has no network");
    return NULL;
  }
  if (broken("wrong_abi")) plugin.abi_version = 2;
  if (broken("null_function")) plugin.permute = NULL;
  if (broken("bad_order")) plugin.native_order = "nccl_rng";
  return &plugin;
}
