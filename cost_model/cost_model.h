#pragma once
// The cost model: how long things take in virtual time, in integer picoseconds. Everything the
// simulator and the closed forms compute time with lives in this folder:
//   cost_model/link_time.h   a message on a route of links: latency plus serialization
//                            (cut-through: latencies add up, the slowest link sets the rate)
//   cost_model/contention.h  fifo link sharing: when a message on busy links starts, arrives
//                            and frees its links (one FIFO per directed link)
//   cost_model/fair_share.h  fair link sharing: max-min fair rates of the flows in flight
//                            (progressive filling), in exact share units
//   cost_model/roofline.h    a device's local work: the larger of compute and memory time
//   cost_model/step_time.h   one step, and a sequence of steps, on uniform links: what the
//                            algorithms' closed forms are written with
//   cost_model/fabric.h      a machine as a collective library sees it (scale-up links, NICs)
//   cost_model/collective_timing.h
//                            one collective as NCCL / RCCL run it on a Fabric: algorithm x
//                            protocol, the fastest chosen (docs/collective-timing.md)
// The rest of the time model is elsewhere, by design:
//   - each algorithm's closed form (its uncontended time) is in its own file,
//     collectives/<algorithm>.cc, next to its schedule, so adding an algorithm touches one file;
//   - the state the rules act on (when each link is next free, the flows in flight, the routes)
//     is sim/link_state.* and sim/fair_links.*, and the schedules run over it in
//     sim/schedule_run.cc; docs/link-sharing.md describes both models;
//   - sim/broadcast_cost.cc is not a formula: it simulates one broadcast over a machine's links
//     for `spmdsim perf --op broadcast`.
// Because the simulator and the closed forms use the same functions, an uncontended simulation
// equals the closed form exactly (tests/collective_schedules_test.cc).

#include "cost_model/collective_timing.h"
#include "cost_model/contention.h"
#include "cost_model/link_time.h"
#include "cost_model/roofline.h"
#include "cost_model/step_time.h"
