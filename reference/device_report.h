#pragma once
// Deadlock reports: one phrase per device ("waits in psum('i') of float32[3]"), devices with the
// same phrase listed together: "devices 0-2,5 wait in ...; device 3 finished after 2 collectives".

#include <string>
#include <vector>

namespace spmd {

// "device 3" or "devices 0-2,5".
std::string device_list(const std::vector<int>& devices);

// Joins per-device phrases (index = device id) into one line, grouping equal phrases in order
// of their first device. A phrase starting with "waits" / "runs" reads "wait" / "run" for
// several devices.
std::string grouped_device_report(const std::vector<std::string>& phrases);

}  // namespace spmd
