/* thread_ring_order_bug: thread_ring.c with one deliberate bug, to show what spmdsim reports when
 * a library's reduction order is not the one it declares. Its all-reduce rotates the ring by one:
 * rank r ends the reduce-scatter phase owning block r + 2 instead of r + 1. Every sum still has
 * all the terms, integers and max / min are exact, and the data lands where it should; only
 * float sums round differently, because each block is added up starting one rank later than
 * gloo_ring_chunked says. Two ranks add the same two numbers either way, so it takes three. */
#define THREAD_RING_ALL_REDUCE_OWNER_SHIFT 2
#include "thread_ring.c"
