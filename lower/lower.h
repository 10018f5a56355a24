// Lowering: replays a schedule's decisions on a program and produces the loop program of one kernel, with
// every stage's loop nest, its buffers (inputs, outputs, workspace, shared/local) and a grid barrier between
// dependent stages. Invalid decisions throw ScheduleError with the reason; nothing is lowered silently wrong.
#pragma once

#include <string>

#include "ir/program.h"
#include "ir/schedule.h"
#include "ir/stmt.h"

namespace ingot {

// Computes not named by the schedule run as plain loop nests over their axes, one stage each, in
// topological order. The function's inputs are the program's placeholders (Program::placeholders() order)
// and its outputs the program's outputs, in order.
LoopFunction lower(const Program& program, const Schedule& schedule);

}  // namespace ingot
