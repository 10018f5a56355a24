// The explicit-vectors rule: a finished CPU schedule gets an explicit_vectors decision for every vectorized loop whose
// register tile the C++ printer can hold in vector registers (lower/vector_tiles.h), when the target's vectors have
// the lanes the printer writes. The strategy scheduler and the hand schedules run it last; lowering validates what
// it adds, and a search may drop or add such decisions like any other.
#pragma once

#include <cstdint>

#include "ir/program.h"
#include "ir/schedule.h"

namespace ingot {

// The schedule with explicit_vectors decisions appended, one per site of its lowered loops, in loop order; unchanged
// when the printer writes no vectors of simd_fp32_lanes lanes (16 and 8 it does) or there is no site. Lowers the
// schedule once.
Schedule with_explicit_vectors(const Program& program, Schedule schedule, int64_t simd_fp32_lanes);

}  // namespace ingot
