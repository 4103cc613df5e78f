/* spmdsim's plugin ABI: how an out-of-tree collective library is loaded by
 * `spmdsim conform --backend-plugin ./libmine.so CASES` and checked against the reference, bit for
 * bit, on every conformance case (docs/backends.md, "Check your collective library in CI").
 *
 * Plain C, no spmdsim or C++ types: a plugin needs only this header. It is installed as
 * include/spmdsim/backends/plugin/spmdsim_plugin.h.
 *
 * A plugin is a shared library exporting one function, SPMDSIM_PLUGIN_ENTRY_POINT:
 *
 *   const struct spmdsim_plugin* spmdsim_plugin_entry(const struct spmdsim_host* host);
 *
 * It returns the plugin's table (static storage, never freed), or NULL after host->set_error.
 * The host checks the table's abi_version, then calls the five operations per rank, as NCCL and
 * MPI are called: rank r's call runs on its own thread, every member of a group calls the same
 * operation concurrently, each with its own send and receive buffers.
 *
 * Threading. For one group the host makes one call per rank of the group, all at the same time,
 * on distinct threads; the operation must return on every rank once every rank has called it.
 * Two operations on the same group never overlap: the next starts after every rank of the
 * previous one returned. Operations on different groups may overlap (the version 1 host runs
 * them one after another, but a plugin must not rely on it). A rank's successive calls may come
 * from different threads: keep no thread-local state between calls. create_group and
 * destroy_group are called from one host thread while no operation on that group runs.
 *
 * Buffers. `send` is read-only, `recv` is written; both belong to the host and are valid only
 * during the call. The send and receive buffers of a call never overlap, and no two ranks share
 * a buffer; all ranks run in the host's process, so a rank may read another rank's send buffer
 * during the same operation if it is handed the pointer, but must not keep any pointer after
 * returning. Elements are packed, native byte order; float16 and bfloat16 are 16-bit patterns,
 * bool is one byte holding 0 or 1. Counts are in elements, never 0 (the host moves nothing for
 * an empty buffer).
 *
 * Reductions. A plugin moves data and chooses the order in which contributions are combined; the
 * host's combine() does the arithmetic, exactly as the reference does (float16 and bfloat16
 * rounded after every step, integers wrapping, max and min dropping NaN). The reference folds a
 * float sum in a named order (docs/reduction-orders.md); a plugin names its own in native_order.
 *
 * Errors. Any function returns non-zero on failure after calling host->set_error(message) on the
 * same thread; spmdsim prints the message and exits with code 2. An operation that does not
 * return within the host's timeout (60 s by default) ends the run with code 2 too; the stuck
 * calls are abandoned, not interrupted.
 *
 * Lifetime. The host never unloads the library. The table returned by the entry point is used
 * until the process exits.
 *
 * Versions. abi_version is the first field of both tables in every version of this ABI; a host
 * refuses a plugin whose abi_version differs from its own, naming both. */
#ifndef SPMDSIM_PLUGIN_H
#define SPMDSIM_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPMDSIM_PLUGIN_ABI_VERSION 1
#define SPMDSIM_PLUGIN_ENTRY_POINT "spmdsim_plugin_entry"

/* C++ gives the enums below int as their fixed underlying type. In C any int may travel in an
 * enum; without a fixed type a C++ host that reads a number outside the enumerators (a faulty
 * plugin's) has undefined behaviour instead of a value it can refuse. The representation is an
 * int either way. */
#ifdef __cplusplus
#define SPMDSIM_ENUM_OF_INT : int
#else
#define SPMDSIM_ENUM_OF_INT
#endif

/* Element types. The numbers are part of the ABI. */
typedef enum spmdsim_dtype SPMDSIM_ENUM_OF_INT {
  SPMDSIM_FLOAT64 = 0,
  SPMDSIM_FLOAT32 = 1,
  SPMDSIM_FLOAT16 = 2,  /* IEEE binary16 */
  SPMDSIM_BFLOAT16 = 3, /* the top 16 bits of a float32 */
  SPMDSIM_INT64 = 4,
  SPMDSIM_INT32 = 5,
  SPMDSIM_INT8 = 6,
  SPMDSIM_UINT8 = 7,
  SPMDSIM_BOOL = 8 /* one byte, 0 or 1 */
} spmdsim_dtype;

/* Reduction operators. The numbers are part of the ABI. */
typedef enum spmdsim_reduce_op SPMDSIM_ENUM_OF_INT {
  SPMDSIM_SUM = 0,
  SPMDSIM_MAX = 1,
  SPMDSIM_MIN = 2
} spmdsim_reduce_op;

/* Bytes per element of `dtype`; 0 for a value that is no spmdsim_dtype. */
static inline size_t spmdsim_dtype_size_bytes(spmdsim_dtype dtype) {
  switch (dtype) {
    case SPMDSIM_FLOAT64: case SPMDSIM_INT64: return 8;
    case SPMDSIM_FLOAT32: case SPMDSIM_INT32: return 4;
    case SPMDSIM_FLOAT16: case SPMDSIM_BFLOAT16: return 2;
    case SPMDSIM_INT8: case SPMDSIM_UINT8: case SPMDSIM_BOOL: return 1;
  }
  return 0;
}

/* What the host offers a plugin; passed to the entry point, valid until the process exits. */
struct spmdsim_host {
  uint32_t abi_version; /* the host's SPMDSIM_PLUGIN_ABI_VERSION */
  /* inout[i] = in[i] (op) inout[i] for i < count, rounded as the reference rounds: the left
   * operand is `in`, as in MPI_Reduce_local. To fold "new + accumulator", pass the new
   * contribution as `in` and the accumulator as `inout`. Thread-safe. Returns non-zero (having
   * set the error) for a dtype or op outside the enums. */
  int (*combine)(spmdsim_dtype dtype, spmdsim_reduce_op op, const void* in, void* inout,
                 size_t count);
  /* Sets the message for the failure the calling thread is about to return; copied at once. */
  void (*set_error)(const char* message);
};

/* A plugin's group of `size` ranks: whatever the plugin needs (its communicator). */
typedef struct spmdsim_group spmdsim_group;

/* What a plugin exports. Every function must be non-NULL. `rank` is the caller's position in
 * the group, 0..size-1. */
struct spmdsim_plugin {
  uint32_t abi_version; /* SPMDSIM_PLUGIN_ABI_VERSION the plugin was built against */
  const char* name;     /* for messages, e.g. "thread_ring" */
  /* The reduction order its float sums fold in, a name from docs/reduction-orders.md such as
   * "gloo_ring", used when --order is not given; NULL: each case's own order. */
  const char* native_order;

  /* A group of `size` ranks; device_ids[r] is rank r's device in the mesh (for libraries that
   * place ranks; the array is valid during the call only). Sets *group. */
  int (*create_group)(int size, const int* device_ids, spmdsim_group** group);
  /* After the group's last operation. */
  void (*destroy_group)(spmdsim_group* group);

  /* Every rank gets op over all ranks' send buffers, element by element: send and recv hold
   * `count` elements. */
  int (*all_reduce)(spmdsim_group* group, int rank, spmdsim_dtype dtype, spmdsim_reduce_op op,
                    const void* send, void* recv, size_t count);
  /* Every rank gets all ranks' send buffers (`send_count` elements each) concatenated in rank
   * order: recv holds size * send_count elements. */
  int (*all_gather)(spmdsim_group* group, int rank, spmdsim_dtype dtype, const void* send,
                    void* recv, size_t send_count);
  /* Rank r gets block r of op over all ranks' send buffers: send is `size` blocks of
   * `recv_count` elements, recv holds one block. */
  int (*reduce_scatter)(spmdsim_group* group, int rank, spmdsim_dtype dtype, spmdsim_reduce_op op,
                        const void* send, void* recv, size_t recv_count);
  /* Rank r gets block r of every rank's send buffer, concatenated in rank order: send and recv
   * are `size` blocks of `block_count` elements. */
  int (*all_to_all)(spmdsim_group* group, int rank, spmdsim_dtype dtype, const void* send,
                    void* recv, size_t block_count);
  /* Point to point, as jax.lax.ppermute: this rank sends its `count` elements to rank send_to
   * and receives rank recv_from's into recv. send_to is -1 when this rank sends to no one;
   * recv_from is -1 when no one sends to it, and then the host has already filled recv with
   * zeros (leave it). A rank may send to itself. */
  int (*permute)(spmdsim_group* group, int rank, spmdsim_dtype dtype, const void* send,
                 void* recv, size_t count, int send_to, int recv_from);
};

/* The entry point, SPMDSIM_PLUGIN_ENTRY_POINT, that a plugin defines and exports, and its type. */
const struct spmdsim_plugin* spmdsim_plugin_entry(const struct spmdsim_host* host);
typedef const struct spmdsim_plugin* (*spmdsim_plugin_entry_fn)(const struct spmdsim_host* host);

#ifdef __cplusplus
}
#endif

#endif /* SPMDSIM_PLUGIN_H */
