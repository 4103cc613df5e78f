/* thread_ring: a collective library of its own, as a spmdsim plugin (spmdsim_plugin.h). Ranks are
 * the host's threads; they pass messages through shared-memory mailboxes, one per (receiver,
 * sender) pair. All-reduce is a ring: a reduce-scatter phase, then an all-gather phase, with data
 * flowing toward rank + 1. Its blocks are sized as Gloo's AllreduceRingChunked sizes its chunk
 * pairs (gloo/allreduce_ring_chunked.h), so float sums fold exactly as spmdsim's modelled order
 * gloo_ring_chunked (docs/reduction-orders.md), the order it declares.
 *
 * Build (out of tree, against an installed spmdsim):
 *   cc -std=c11 -O2 -fPIC -shared -I$PREFIX/include/spmdsim thread_ring.c -o libthread_ring.so -lpthread
 * Check:
 *   spmdsim conform --backend-plugin ./libthread_ring.so tests/conformance/cases */
#define _POSIX_C_SOURCE 200809L /* pthreads under -std=c11 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/plugin/spmdsim_plugin.h"

/* After all-reduce's reduce-scatter phase rank r owns block r + 1, so that block j's sum starts at
 * rank j, as gloo_ring_chunked's pair j does. thread_ring_order_bug.c sets this to 2. */
#ifndef THREAD_RING_ALL_REDUCE_OWNER_SHIFT
#define THREAD_RING_ALL_REDUCE_OWNER_SHIFT 1
#endif

static const struct spmdsim_host* g_host;

/* ---- Mailboxes: one message slot per (receiver, sender). */

struct mailbox {
  void* bytes; /* a copy of the message, owned by the slot while full */
  size_t size_bytes;
  int full;
};

struct spmdsim_group {
  int size;
  pthread_mutex_t mutex;
  pthread_cond_t changed;
  struct mailbox* mailboxes; /* size * size, [receiver * size + sender] */
};

static struct mailbox* mailbox_of(struct spmdsim_group* group, int receiver, int sender) {
  return &group->mailboxes[receiver * group->size + sender];
}

static int fail(const char* what) {
  g_host->set_error(what);
  return 1;
}

/* Copies `size_bytes` into the slot for `receiver`, once the previous message was taken. */
static int send_to(struct spmdsim_group* group, int sender, int receiver, const void* data,
                   size_t size_bytes) {
  void* copy = malloc(size_bytes > 0 ? size_bytes : 1);
  if (copy == NULL) return fail("thread_ring: out of memory for a message");
  memcpy(copy, data, size_bytes);
  struct mailbox* slot = mailbox_of(group, receiver, sender);
  pthread_mutex_lock(&group->mutex);
  while (slot->full) pthread_cond_wait(&group->changed, &group->mutex);
  slot->bytes = copy;
  slot->size_bytes = size_bytes;
  slot->full = 1;
  pthread_cond_broadcast(&group->changed);
  pthread_mutex_unlock(&group->mutex);
  return 0;
}

/* Waits for the message from `sender` and copies it into `out` (`size_bytes` expected). */
static int receive_from(struct spmdsim_group* group, int receiver, int sender, void* out,
                        size_t size_bytes) {
  struct mailbox* slot = mailbox_of(group, receiver, sender);
  pthread_mutex_lock(&group->mutex);
  while (!slot->full) pthread_cond_wait(&group->changed, &group->mutex);
  void* bytes = slot->bytes;
  const size_t got_bytes = slot->size_bytes;
  slot->bytes = NULL;
  slot->full = 0;
  pthread_cond_broadcast(&group->changed);
  pthread_mutex_unlock(&group->mutex);
  if (got_bytes == size_bytes) memcpy(out, bytes, size_bytes);
  free(bytes);
  return got_bytes == size_bytes ? 0 : fail("thread_ring: a message of an unexpected size");
}

/* ---- The ring. Data flows toward rank + 1; positions are taken mod n. */

static int mod(int value, int n) { return ((value % n) + n) % n; }

/* `count` elements cut into n blocks of `block_elements` (the last ones may be short or empty):
 * block b is [begin(b), begin(b + 1)). */
struct blocks {
  size_t count, block_elements, element_bytes;
};
static size_t block_begin(const struct blocks* blocks, int b) {
  const size_t begin = (size_t)b * blocks->block_elements;
  return begin < blocks->count ? begin : blocks->count;
}
static size_t block_count(const struct blocks* blocks, int b) {
  return block_begin(blocks, b + 1) - block_begin(blocks, b);
}
static size_t block_offset_bytes(const struct blocks* blocks, int b) {
  return block_begin(blocks, b) * blocks->element_bytes;
}

/* Gloo's AllreduceRingChunked: 2n chunks of max(256, ceil(count / 2n)) elements, chunks 2j and
 * 2j + 1 reduced together; here they are one block. */
static struct blocks all_reduce_blocks(size_t count, size_t element_bytes, int n) {
  const size_t chunks = 2 * (size_t)n;
  size_t chunk_elements = (count + chunks - 1) / chunks;
  if (chunk_elements < 256) chunk_elements = 256;
  const struct blocks blocks = {count, 2 * chunk_elements, element_bytes};
  return blocks;
}

/* Reduce-scatter phase over `work`, which starts as this rank's contribution `own` and ends with
 * block r + owner_shift reduced over all ranks. At step s rank r passes its partial sum of block
 * r + owner_shift - 1 - s to rank r + 1 and adds its own contribution to the partial sum it
 * receives ("own + received": the new contribution is the left operand). So block b's sum
 * starts at rank b - owner_shift + 1 and ends at its owner, b - owner_shift. */
static int reduce_scatter_phase(struct spmdsim_group* group, int rank, spmdsim_dtype dtype,
                                spmdsim_reduce_op op, const char* own, char* work,
                                const struct blocks* blocks, int owner_shift) {
  const int n = group->size;
  const int next = mod(rank + 1, n), previous = mod(rank - 1, n);
  for (int step = 0; step < n - 1; ++step) {
    const int send_block = mod(rank + owner_shift - 1 - step, n);
    const int receive_block = mod(rank + owner_shift - 2 - step, n);
    const size_t offset = block_offset_bytes(blocks, receive_block);
    const size_t count = block_count(blocks, receive_block);
    if (send_to(group, rank, next, work + block_offset_bytes(blocks, send_block),
                block_count(blocks, send_block) * blocks->element_bytes) != 0 ||
        receive_from(group, rank, previous, work + offset, count * blocks->element_bytes) != 0 ||
        g_host->combine(dtype, op, own + offset, work + offset, count) != 0) {
      return 1;
    }
  }
  return 0;
}

/* All-gather phase: rank r starts owning block r + owner_shift; at step s it passes block
 * r + owner_shift - s to rank r + 1 and receives the block before it. */
static int all_gather_phase(struct spmdsim_group* group, int rank, char* buffer,
                            const struct blocks* blocks, int owner_shift) {
  const int n = group->size;
  const int next = mod(rank + 1, n), previous = mod(rank - 1, n);
  for (int step = 0; step < n - 1; ++step) {
    const int send_block = mod(rank + owner_shift - step, n);
    const int receive_block = mod(rank + owner_shift - 1 - step, n);
    if (send_to(group, rank, next, buffer + block_offset_bytes(blocks, send_block),
                block_count(blocks, send_block) * blocks->element_bytes) != 0 ||
        receive_from(group, rank, previous, buffer + block_offset_bytes(blocks, receive_block),
                     block_count(blocks, receive_block) * blocks->element_bytes) != 0) {
      return 1;
    }
  }
  return 0;
}

/* ---- The plugin's functions. */

static int create_group(int size, const int* device_ids, struct spmdsim_group** out) {
  (void)device_ids; /* threads in one process: placement does not matter */
  struct spmdsim_group* group = calloc(1, sizeof *group);
  if (group == NULL) return fail("thread_ring: out of memory for a group");
  group->size = size;
  group->mailboxes = calloc((size_t)size * (size_t)size, sizeof *group->mailboxes);
  if (group->mailboxes == NULL) {
    free(group);
    return fail("thread_ring: out of memory for the mailboxes");
  }
  pthread_mutex_init(&group->mutex, NULL);
  pthread_cond_init(&group->changed, NULL);
  *out = group;
  return 0;
}

static void destroy_group(struct spmdsim_group* group) {
  pthread_cond_destroy(&group->changed);
  pthread_mutex_destroy(&group->mutex);
  free(group->mailboxes);
  free(group);
}

static int all_reduce(struct spmdsim_group* group, int rank, spmdsim_dtype dtype,
                      spmdsim_reduce_op op, const void* send, void* recv, size_t count) {
  const size_t element_bytes = spmdsim_dtype_size_bytes(dtype);
  const struct blocks blocks = all_reduce_blocks(count, element_bytes, group->size);
  memcpy(recv, send, count * element_bytes);
  if (reduce_scatter_phase(group, rank, dtype, op, send, recv, &blocks,
                           THREAD_RING_ALL_REDUCE_OWNER_SHIFT) != 0) {
    return 1;
  }
  return all_gather_phase(group, rank, recv, &blocks, THREAD_RING_ALL_REDUCE_OWNER_SHIFT);
}

/* The reduce-scatter phase alone over blocks of recv_count, rank r owning block r: block r's sum
 * starts at rank r + 1 and ends at r (gloo_ring_chunked's reduce-scatter fold). */
static int reduce_scatter(struct spmdsim_group* group, int rank, spmdsim_dtype dtype,
                          spmdsim_reduce_op op, const void* send, void* recv, size_t recv_count) {
  const size_t element_bytes = spmdsim_dtype_size_bytes(dtype);
  const struct blocks blocks = {recv_count * (size_t)group->size, recv_count, element_bytes};
  char* work = malloc(blocks.count * element_bytes);
  if (work == NULL) return fail("thread_ring: out of memory for reduce_scatter");
  memcpy(work, send, blocks.count * element_bytes);
  const int status = reduce_scatter_phase(group, rank, dtype, op, send, work, &blocks, 0);
  if (status == 0) memcpy(recv, work + block_offset_bytes(&blocks, rank), recv_count * element_bytes);
  free(work);
  return status;
}

static int all_gather(struct spmdsim_group* group, int rank, spmdsim_dtype dtype,
                      const void* send, void* recv, size_t send_count) {
  const size_t element_bytes = spmdsim_dtype_size_bytes(dtype);
  const struct blocks blocks = {send_count * (size_t)group->size, send_count, element_bytes};
  memcpy((char*)recv + block_offset_bytes(&blocks, rank), send, send_count * element_bytes);
  return all_gather_phase(group, rank, recv, &blocks, 0);
}

/* Direct: block k of this rank's buffer goes to rank k; every send lands in its own slot, so
 * sending all first cannot block. */
static int all_to_all(struct spmdsim_group* group, int rank, spmdsim_dtype dtype,
                      const void* send, void* recv, size_t block_count) {
  const size_t block_bytes = block_count * spmdsim_dtype_size_bytes(dtype);
  for (int k = 0; k < group->size; ++k) {
    if (send_to(group, rank, k, (const char*)send + (size_t)k * block_bytes, block_bytes) != 0) {
      return 1;
    }
  }
  for (int k = 0; k < group->size; ++k) {
    if (receive_from(group, rank, k, (char*)recv + (size_t)k * block_bytes, block_bytes) != 0) {
      return 1;
    }
  }
  return 0;
}

static int permute(struct spmdsim_group* group, int rank, spmdsim_dtype dtype, const void* send,
                   void* recv, size_t count, int send_to_rank, int receive_from_rank) {
  const size_t size_bytes = count * spmdsim_dtype_size_bytes(dtype);
  if (send_to_rank >= 0 && send_to(group, rank, send_to_rank, send, size_bytes) != 0) return 1;
  if (receive_from_rank >= 0 &&
      receive_from(group, rank, receive_from_rank, recv, size_bytes) != 0) {
    return 1;
  }
  return 0;
}

const struct spmdsim_plugin* spmdsim_plugin_entry(const struct spmdsim_host* host) {
  static const struct spmdsim_plugin plugin = {
      .abi_version = SPMDSIM_PLUGIN_ABI_VERSION,
#if THREAD_RING_ALL_REDUCE_OWNER_SHIFT == 1
      .name = "thread_ring",
#else
      .name = "thread_ring_order_bug",
#endif
      .native_order = "gloo_ring_chunked",
      .create_group = create_group,
      .destroy_group = destroy_group,
      .all_reduce = all_reduce,
      .all_gather = all_gather,
      .reduce_scatter = reduce_scatter,
      .all_to_all = all_to_all,
      .permute = permute,
  };
  g_host = host;
  return &plugin;
}
