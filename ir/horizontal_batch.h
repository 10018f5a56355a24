// Horizontal batching (Souffle's horizontal transformation): computes that are the same up to one read and do not
// depend on one another (an LSTM layer's input projections W x_t, one per step) become one compute with a leading
// batch axis, reading a stacked copy of the read they differ in: a hundred matrix-vector products become one matrix
// product that reads its weight once. Readers of a member read the batched compute at the member's index. Pure: runs
// on any program; the `batch` schedule decision (ir/schedule.h) applies it before lowering.
#pragma once

#include <string>
#include <vector>

#include "ir/program.h"
#include "ir/schedule.h"

namespace ingot {

struct BatchGroup {
  std::string batched;               // the new compute, [members, the members' shape...]
  std::string stacked;               // the read they differ in, stacked: [members, its variables' extents...] (none
                                     // where they read one tensor a constant step apart: the batched compute reads it)
  std::vector<std::string> members;  // computes of the program, in the batched compute's order
  bool operator==(const BatchGroup&) const = default;
};

// The groups of two or more computes that batch_computes takes: all the computes that print the same but for one read
// with the same variables, where those reads differ, none is an output, none reads another (directly or not), and the
// stacked read is no larger than the largest tensor they all read (the weight whose one read is the point: the stacked
// copy costs a write and a read of its own). Where they differ in which input (placeholder) they read, they are not
// batched: the copy of a weight would be made at every run. A set of alike computes that fails a rule is left whole
// (no part of it is tried). Members in the order of their names, numbers by value (t9 before t10), groups in program
// order of their earliest member, no compute in two groups; the new names are unused in the program.
std::vector<BatchGroup> batchable_groups(const Program& program);

// The same for groups that differ only in the tensors they read, of the same shapes (every layer's input projections
// of a stacked LSTM): the members' common form with every tensor named by its dtype and shape, and the member count.
std::string batch_group_kind(const Program& program, const BatchGroup& group);

// The program with the group batched. Throws std::invalid_argument naming the problem where the group is not one
// batchable_groups could give (apart from the stacked read's size) or a new name is taken.
Program batch_computes(const Program& program, const BatchGroup& group);

// The schedule's `batch` decisions, each as the group it names.
std::vector<BatchGroup> batch_groups_of(const Schedule& schedule);

// The schedule without its batch decisions (a schedule of the batched program), with its layout.
Schedule without_batches(const Schedule& schedule);
// `batches`' batch decisions, then the schedule's decisions (a schedule of the program they batch), with its layout.
Schedule after_batches(const Schedule& batches, const Schedule& schedule);

// The program with every `batch` decision of the schedule applied in order (the program itself where there is none).
// Throws ScheduleError naming the decision that cannot be applied.
Program batched_program(const Program& program, const Schedule& schedule);

}  // namespace ingot
