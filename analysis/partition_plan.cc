#include "analysis/partition_plan.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

namespace ingot {
namespace {

// Where a TE sits in a plan; kernel -1 when it is not in any stage.
struct TeLocation {
  int kernel = -1;
  int stage = -1;
  int order = -1;  // position inside the stage's list
  bool before(const TeLocation& o) const {
    return std::tie(kernel, stage, order) < std::tie(o.kernel, o.stage, o.order);
  }
};

std::string stage_label(int kernel, int stage) {
  return "stage " + std::to_string(kernel) + "." + std::to_string(stage);
}

// Name -> position look-ups built once per call: plans of whole models name thousands of TEs.
struct PlanIndex {
  std::unordered_map<std::string, int> compute_position;  // into analysis.tes
  std::unordered_map<std::string, int> tensor_position;   // into analysis.tensors
  std::unordered_map<const TensorNode*, int> compute_of_node;
  std::vector<int> tensor_of_compute;  // analysis.tes position -> analysis.tensors position

  explicit PlanIndex(const ProgramAnalysis& a) {
    for (size_t i = 0; i < a.tes.size(); ++i) {
      compute_position.emplace(a.tes[i].tensor->name, static_cast<int>(i));
      compute_of_node.emplace(a.tes[i].tensor.get(), static_cast<int>(i));
    }
    tensor_of_compute.assign(a.tes.size(), -1);
    for (size_t i = 0; i < a.tensors.size(); ++i) {
      tensor_position.emplace(a.tensors[i].tensor->name, static_cast<int>(i));
      if (a.tensors[i].producer >= 0) tensor_of_compute[a.tensors[i].producer] = static_cast<int>(i);
    }
  }
  int compute(const std::string& name) const {
    auto it = compute_position.find(name);
    return it == compute_position.end() ? -1 : it->second;
  }
  int compute(const Tensor& t) const {
    auto it = compute_of_node.find(t.get());
    return it == compute_of_node.end() ? -1 : it->second;
  }
  int tensor(const std::string& name) const {
    auto it = tensor_position.find(name);
    return it == tensor_position.end() ? -1 : it->second;
  }
};

template <class T>
T required(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw PlanError(where + ": missing field '" + key + "'");
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw PlanError(where + ": field '" + key + "' has the wrong type");
  }
}

}  // namespace

int64_t PartitionPlan::stage_count() const {
  int64_t n = 0;
  for (const PlanKernel& k : kernels) n += static_cast<int64_t>(k.stages.size());
  return n;
}

nlohmann::json plan_to_json(const PartitionPlan& plan) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const PlanKernel& k : plan.kernels) {
    nlohmann::json stages = nlohmann::json::array();
    for (const PlanStage& s : k.stages)
      stages.push_back({{"tes", s.tes}, {"barrier_before", s.barrier_before}, {"prefetch", s.prefetch}});
    kernels.push_back({{"stages", stages}, {"resident", k.resident}});
  }
  return {{"version", kPartitionPlanVersion},
          {"strategy", plan.strategy},
          {"program", plan.program},
          {"target", plan.target},
          {"kernels", kernels}};
}

PartitionPlan plan_from_json(const nlohmann::json& j) {
  int version = required<int>(j, "version", "plan");
  if (version != kPartitionPlanVersion) {
    throw PlanError("plan: version " + std::to_string(version) + " is not the supported version " +
                    std::to_string(kPartitionPlanVersion));
  }
  PartitionPlan plan;
  plan.strategy = required<std::string>(j, "strategy", "plan");
  plan.program = required<std::string>(j, "program", "plan");
  plan.target = required<std::string>(j, "target", "plan");
  auto kernels = required<std::vector<nlohmann::json>>(j, "kernels", "plan");
  for (size_t k = 0; k < kernels.size(); ++k) {
    std::string where = "kernel " + std::to_string(k);
    PlanKernel kernel;
    kernel.resident = required<std::vector<std::string>>(kernels[k], "resident", where);
    auto stages = required<std::vector<nlohmann::json>>(kernels[k], "stages", where);
    for (size_t s = 0; s < stages.size(); ++s) {
      std::string stage_where = stage_label(static_cast<int>(k), static_cast<int>(s));
      PlanStage stage;
      stage.tes = required<std::vector<std::string>>(stages[s], "tes", stage_where);
      stage.barrier_before = required<bool>(stages[s], "barrier_before", stage_where);
      stage.prefetch = required<std::vector<std::string>>(stages[s], "prefetch", stage_where);
      kernel.stages.push_back(std::move(stage));
    }
    plan.kernels.push_back(std::move(kernel));
  }
  return plan;
}

std::vector<std::string> plan_problems(const PartitionPlan& plan, const ProgramAnalysis& analysis) {
  std::vector<std::string> problems;
  PlanIndex index(analysis);
  std::vector<TeLocation> where(analysis.tes.size());
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const PlanKernel& kernel = plan.kernels[k];
    if (kernel.stages.empty()) problems.push_back("kernel " + std::to_string(k) + " has no stage");
    if (!kernel.stages.empty() && kernel.stages[0].barrier_before) {
      problems.push_back(stage_label(k, 0) + " is a kernel's first stage but has a barrier before it");
    }
    for (size_t s = 0; s < kernel.stages.size(); ++s) {
      const PlanStage& stage = kernel.stages[s];
      if (stage.tes.empty()) problems.push_back(stage_label(k, s) + " has no TE");
      for (size_t o = 0; o < stage.tes.size(); ++o) {
        const std::string& name = stage.tes[o];
        int c = index.compute(name);
        if (c < 0) {
          bool is_tensor = index.tensor(name) >= 0;
          problems.push_back(stage_label(k, s) + ": '" + name + "' is " +
                             (is_tensor ? "a placeholder, not a compute" : "not a tensor of the program"));
          continue;
        }
        if (where[c].kernel >= 0) {
          problems.push_back("'" + name + "' is in " + stage_label(where[c].kernel, where[c].stage) + " and in " +
                             stage_label(k, s));
          continue;
        }
        where[c] = TeLocation{static_cast<int>(k), static_cast<int>(s), static_cast<int>(o)};
      }
    }
  }
  std::vector<std::string> missing;
  for (size_t c = 0; c < analysis.tes.size(); ++c) {
    if (where[c].kernel < 0) missing.push_back(analysis.tes[c].tensor->name);
  }
  if (!missing.empty()) {
    std::string text = std::to_string(missing.size()) + " compute(s) in no stage: ";
    for (size_t i = 0; i < missing.size() && i < 5; ++i) text += (i ? ", " : "") + missing[i];
    if (missing.size() > 5) text += ", ...";
    problems.push_back(text);
  }

  // Barriers so far in each kernel, by stage: a barrier in (producer stage, reader stage] orders the two.
  std::vector<std::vector<int>> barriers_through(plan.kernels.size());
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    int count = 0;
    for (const PlanStage& s : plan.kernels[k].stages) barriers_through[k].push_back(count += s.barrier_before);
  }
  for (size_t c = 0; c < analysis.tes.size(); ++c) {
    const TeLocation& reader = where[c];
    if (reader.kernel < 0) continue;
    for (const TensorAccess& access : analysis.tes[c].accesses) {
      int p = index.compute(access.tensor);
      if (p < 0 || where[p].kernel < 0) continue;
      const TeLocation& producer = where[p];
      const std::string& name = analysis.tes[c].tensor->name;
      if (!producer.before(reader)) {
        problems.push_back("'" + name + "' (" + stage_label(reader.kernel, reader.stage) + ") reads '" +
                           access.tensor->name + "', which is computed after it (" +
                           stage_label(producer.kernel, producer.stage) + ")");
      } else if (producer.kernel == reader.kernel && producer.stage < reader.stage) {
        const std::vector<int>& b = barriers_through[reader.kernel];
        if (b[reader.stage] == b[producer.stage]) {
          problems.push_back("no barrier between " + stage_label(producer.kernel, producer.stage) + " and " +
                             stage_label(reader.kernel, reader.stage) + ", where '" + name + "' reads '" +
                             access.tensor->name + "'");
        }
      }
    }
  }

  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    for (const std::string& name : plan.kernels[k].resident) {
      int t = index.tensor(name);
      if (t < 0) {
        problems.push_back("kernel " + std::to_string(k) + ": resident '" + name + "' is not a tensor of the program");
        continue;
      }
      const TensorReuse& reuse = analysis.tensors[t];
      bool used = reuse.producer >= 0 && where[reuse.producer].kernel == static_cast<int>(k);
      for (int r : reuse.readers) used = used || where[r].kernel == static_cast<int>(k);
      if (!used) {
        problems.push_back("kernel " + std::to_string(k) + ": resident '" + name +
                           "' is neither read nor written in it");
      }
    }
  }

  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    for (size_t s = 0; s < plan.kernels[k].stages.size(); ++s) {
      for (const std::string& name : plan.kernels[k].stages[s].prefetch) {
        std::string what = stage_label(k, s) + ": prefetched '" + name + "' ";
        int t = index.tensor(name);
        if (t < 0) {
          problems.push_back(what + "is not a tensor of the program");
          continue;
        }
        const TensorReuse& reuse = analysis.tensors[t];
        bool read_here = false;
        for (int r : reuse.readers)
          read_here = read_here || (where[r].kernel == static_cast<int>(k) && where[r].stage == static_cast<int>(s));
        if (s == 0) {
          problems.push_back(what + "has no stage before it in its kernel to be fetched under");
        } else if (!read_here) {
          problems.push_back(what + "is not read by the stage");
        } else if (reuse.producer >= 0 && where[reuse.producer].kernel == static_cast<int>(k)) {
          problems.push_back(what + "is computed in the same kernel");
        }
      }
    }
  }
  return problems;
}

void validate_plan(const PartitionPlan& plan, const ProgramAnalysis& analysis) {
  std::vector<std::string> problems = plan_problems(plan, analysis);
  if (problems.empty()) return;
  std::string text = "invalid " + plan.strategy + " plan for " + analysis.program_name + ":";
  for (const std::string& p : problems) text += "\n  " + p;
  throw PlanError(text);
}

PlanTraffic plan_traffic(const PartitionPlan& plan, const ProgramAnalysis& analysis) {
  PlanIndex index(analysis);
  std::vector<int> kernel_of(analysis.tes.size(), -1);
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    for (const PlanStage& s : plan.kernels[k].stages) {
      for (const std::string& name : s.tes) {
        int c = index.compute(name);
        if (c < 0) throw PlanError("plan_traffic: '" + name + "' is not a compute of " + analysis.program_name);
        kernel_of[c] = static_cast<int>(k);
      }
    }
  }
  PlanTraffic traffic;
  // Footprints summed per tensor over a group of TEs, capped at the tensor's size when the group is done.
  auto flush = [&](std::unordered_map<int, int64_t>& footprints) {
    int64_t bytes = 0;
    for (const auto& [t, sum] : footprints) bytes += std::min(sum, analysis.tensors[t].bytes);
    footprints.clear();
    return bytes;
  };
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const PlanKernel& kernel = plan.kernels[k];
    std::unordered_map<int, bool> resident;
    for (const std::string& name : kernel.resident) resident[index.tensor(name)] = true;
    std::unordered_map<int, int64_t> kernel_reads, stage_reads;
    int64_t read = 0, written = 0;
    for (const PlanStage& s : kernel.stages) {
      for (const std::string& name : s.tes) {
        int c = index.compute(name);
        for (const TensorAccess& access : analysis.tes[c].accesses) {
          int p = index.compute(access.tensor);
          if (p >= 0 && kernel_of[p] == static_cast<int>(k)) continue;  // made in this kernel: stays on chip
          int t = p >= 0 ? index.tensor_of_compute[p] : index.tensor(access.tensor->name);
          (resident.count(t) ? kernel_reads : stage_reads)[t] += access.bytes;
        }
        const TensorReuse& out = analysis.tensors[index.tensor_of_compute[c]];
        bool leaves = out.is_output;
        for (int r : out.readers) leaves = leaves || kernel_of[r] != static_cast<int>(k);
        if (leaves) written += out.bytes;
      }
      read += flush(stage_reads);
    }
    read += flush(kernel_reads);
    traffic.kernel_bytes.push_back(read + written);
    traffic.bytes_read += read;
    traffic.bytes_written += written;
  }
  return traffic;
}

std::string format_plan(const PartitionPlan& plan, const ProgramAnalysis& analysis) {
  PlanIndex index(analysis);
  PlanTraffic traffic = plan_traffic(plan, analysis);
  std::ostringstream os;
  os << "plan " << plan.strategy << " of " << plan.program << " on " << plan.target << ": " << plan.kernel_count()
     << (plan.kernel_count() == 1 ? " kernel, " : " kernels, ") << plan.stage_count()
     << (plan.stage_count() == 1 ? " stage, " : " stages, ") << traffic.bytes_moved() << " B moved ("
     << traffic.bytes_read << " read, " << traffic.bytes_written << " written)\n";
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const PlanKernel& kernel = plan.kernels[k];
    os << "kernel " << k << ": " << traffic.kernel_bytes[k] << " B moved";
    if (!kernel.resident.empty()) {
      os << "; resident";
      for (const std::string& name : kernel.resident) {
        os << " " << name << " (" << analysis.tensors[index.tensor(name)].bytes << " B)";
      }
    }
    os << "\n";
    for (size_t s = 0; s < kernel.stages.size(); ++s) {
      const PlanStage& stage = kernel.stages[s];
      if (!stage.prefetch.empty()) {
        os << "  prefetch";
        for (const std::string& name : stage.prefetch)
          os << " " << name << " (" << analysis.tensors[index.tensor(name)].bytes << " B)";
        os << "\n";
      }
      if (stage.barrier_before) os << "  barrier\n";
      os << "  stage " << s << ":";
      for (size_t i = 0; i < stage.tes.size(); ++i) {
        os << (i ? ", " : " ") << stage.tes[i] << " ("
           << te_class_name(analysis.tes[index.compute(stage.tes[i])].te_class) << ")";
      }
      os << "\n";
    }
  }
  return os.str();
}

nlohmann::json plan_report_json(const PartitionPlan& plan, const ProgramAnalysis& analysis) {
  PlanIndex index(analysis);
  PlanTraffic traffic = plan_traffic(plan, analysis);
  nlohmann::json kernels = nlohmann::json::array();
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    nlohmann::json stages = nlohmann::json::array();
    for (const PlanStage& s : plan.kernels[k].stages) {
      std::vector<std::string> classes;
      for (const std::string& name : s.tes)
        classes.push_back(te_class_name(analysis.tes[index.compute(name)].te_class));
      stages.push_back(
          {{"tes", s.tes}, {"classes", classes}, {"barrier_before", s.barrier_before}, {"prefetch", s.prefetch}});
    }
    kernels.push_back(
        {{"stages", stages}, {"resident", plan.kernels[k].resident}, {"bytes_moved", traffic.kernel_bytes[k]}});
  }
  return {{"strategy", plan.strategy},
          {"program", plan.program},
          {"target", plan.target},
          {"kernel_count", plan.kernel_count()},
          {"bytes_moved", traffic.bytes_moved()},
          {"bytes_read", traffic.bytes_read},
          {"bytes_written", traffic.bytes_written},
          {"kernels", kernels}};
}

}  // namespace ingot
