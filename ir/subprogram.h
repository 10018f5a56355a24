// A part of a program as a program of its own: chosen computes, each tensor they read from outside the part turned
// into a placeholder of the same shape and dtype, and tensors renamed where asked. Whole-model tuning cuts its tasks
// (the stages of a partition plan) out of a model this way (tuner/model_tasks.h). Pure: runs on any program.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/program.h"

namespace ingot {

// The part's outputs are its computes that a compute outside the part reads, or that are outputs of `program`, in
// the program's topological order. `computes` names compute tensors of `program`, each once; `rename` maps names of
// the part's tensors (computes and the tensors they read) to new names, and the others keep theirs. Throws
// std::invalid_argument naming the problem: no computes, an unknown name, a placeholder, a repeated name, or a
// rename that makes two tensors share a name.
Program extract_subprogram(const Program& program, const std::vector<std::string>& computes, const std::string& name,
                           const std::map<std::string, std::string>& rename = {});

}  // namespace ingot
