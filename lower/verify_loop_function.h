// The loop-IR verifier: checks that a LoopFunction keeps the contract of docs/loop_semantics.md (buffers in scope,
// variables bound, loop kinds and GPU bindings where they may stand, barriers and prefetches where every thread
// reaches them, no tensor expressions left). It may run after any pass; the pipeline (codegen/pipeline.h) runs it
// between passes in tests and debug builds.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/stmt.h"

namespace ingot {

// A pass produced loop IR that breaks the contract: a bug of ingot, not of the schedule.
class LoopIrError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Every rule of docs/loop_semantics.md that f breaks, one message each ("<where>: <what>", where is "arguments",
// "stage N" with the loops and conditions around the statement, or "top level, after stage N"), in the order the
// statements come; empty when f keeps them all. Identical messages are reported once.
std::vector<std::string> loop_function_problems(const LoopFunction& f);

// Throws LoopIrError naming the function, the pass after which its IR broke and the problems when there are any.
void verify_loop_function(const LoopFunction& f, const std::string& after_pass);

}  // namespace ingot
