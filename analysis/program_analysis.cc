#include "analysis/program_analysis.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "ir/flops.h"

namespace ingot {

const TeAnalysis* ProgramAnalysis::find_te(const std::string& name) const {
  for (const TeAnalysis& te : tes)
    if (te.tensor->name == name) return &te;
  return nullptr;
}

const TensorReuse* ProgramAnalysis::find_tensor(const std::string& name) const {
  for (const TensorReuse& t : tensors)
    if (t.tensor->name == name) return &t;
  return nullptr;
}

ProgramAnalysis analyze(const Program& program, const Target& target) {
  ProgramAnalysis out;
  out.program_name = program.name();
  out.target = target;
  std::vector<std::vector<TensorAccess>> accesses;
  for (const Tensor& t : program.tensors()) {
    if (t->is_placeholder()) continue;
    TeAnalysis te;
    te.tensor = t;
    te.accesses = analyze_accesses(t);
    te.te_class = classify_te(t, te.accesses);
    te.parallelism = t->num_elements();
    te.output_bytes = te.parallelism * dtype_bytes(t->dtype);
    if (const ReduceNode* r = t->reduction())
      for (const IterVar& k : r->axes) te.reduction_size *= k.extent;
    te.flops = tensor_flops(t);
    te.bytes = te.output_bytes;
    for (const TensorAccess& a : te.accesses) te.bytes += a.bytes;
    te.arithmetic_intensity = arithmetic_intensity(te.flops, te.bytes);
    te.intensity = classify_intensity(te.arithmetic_intensity, target);
    out.total_flops += te.flops;
    accesses.push_back(te.accesses);
    out.tes.push_back(std::move(te));
  }
  out.tensors = analyze_reuse(program, accesses);
  return out;
}

namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string shape_text(const Tensor& t) {
  std::string out = std::string(dtype_name(t->dtype)) + "[";
  for (size_t d = 0; d < t->shape.size(); ++d) out += (d ? ", " : "") + std::to_string(t->shape[d]);
  return out + "]";
}

// Half-open per dimension, as slices are written: [0:24, 8:16].
std::string region_text(const std::vector<IntRange>& region) {
  std::string out = "[";
  for (size_t d = 0; d < region.size(); ++d)
    out += (d ? ", " : "") + std::to_string(region[d].lo) + ":" + std::to_string(region[d].hi + 1);
  return out + "]";
}

}  // namespace

std::string format_analysis(const ProgramAnalysis& a, size_t max_readers) {
  std::ostringstream os;
  int placeholders = 0;
  for (const TensorReuse& t : a.tensors) placeholders += t.tensor->is_placeholder();
  os << "program " << a.program_name << " on " << a.target.name << " (ridge "
     << fixed(a.target.ridge_flops_per_byte(), 2) << " FLOP/byte): " << a.tes.size() << " computes, " << placeholders
     << " placeholders, " << a.total_flops << " FLOPs\n";
  std::map<std::string, int> class_counts;
  int compute_intensive = 0;
  for (const TeAnalysis& te : a.tes) {
    ++class_counts[te_class_name(te.te_class)];
    compute_intensive += te.intensity == Intensity::kCompute;
  }
  os << "classes:";
  for (const auto& [name, count] : class_counts) os << " " << name << " " << count << ";";
  os << " compute-intensive " << compute_intensive << "\n";
  os << "computes:\n";
  for (const TeAnalysis& te : a.tes) {
    os << "  " << te.tensor->name << " " << shape_text(te.tensor) << ": " << te_class_name(te.te_class) << ", "
       << intensity_name(te.intensity) << "-intensive, " << te.flops << " FLOPs / " << te.bytes << " B = AI "
       << fixed(te.arithmetic_intensity, 2) << ", parallel " << te.parallelism << ", reduce " << te.reduction_size
       << "\n    reads";
    if (te.accesses.empty()) os << " nothing";
    for (size_t i = 0; i < te.accesses.size(); ++i) {
      const TensorAccess& acc = te.accesses[i];
      os << (i ? "," : "") << " " << acc.tensor->name << region_text(acc.region) << " " << acc.bytes << " B ("
         << access_kind_name(acc.kind) << ")";
    }
    os << "; writes " << te.output_bytes << " B\n";
  }
  os << "tensors read by several computes:";
  bool any = false;
  for (const TensorReuse& t : a.tensors) {
    if (!t.read_by_several()) continue;
    any = true;
    os << "\n  " << t.tensor->name << " " << shape_text(t.tensor) << " " << t.bytes << " B: " << t.readers.size()
       << " readers (";
    for (size_t i = 0; i < t.readers.size() && i < max_readers; ++i)
      os << (i ? ", " : "") << a.tes[size_t(t.readers[i])].tensor->name;
    if (t.readers.size() > max_readers) os << ", ... " << t.readers.size() - max_readers << " more";
    os << "), " << t.bytes_read << " B read in all, live over " << t.live_span() << " computes";
  }
  os << (any ? "\n" : " none\n");
  return os.str();
}

nlohmann::json analysis_to_json(const ProgramAnalysis& a) {
  using nlohmann::json;
  const Target& t = a.target;
  json target = {{"name", t.name},
                 {"kind", target_kind_name(t.kind)},
                 {"peak_fp32_gflops", t.peak_fp32_gflops},
                 {"memory_bandwidth_gb_s", t.memory_bandwidth_gb_s},
                 {"ridge_flops_per_byte", t.ridge_flops_per_byte()}};
  json tes = json::array();
  for (const TeAnalysis& te : a.tes) {
    json reads = json::array();
    for (const TensorAccess& acc : te.accesses) {
      json region = json::array();
      for (const IntRange& r : acc.region) region.push_back({r.lo, r.hi + 1});
      reads.push_back({{"tensor", acc.tensor->name},
                       {"kind", access_kind_name(acc.kind)},
                       {"reads", acc.reads},
                       {"region", region},
                       {"elements", acc.elements},
                       {"bytes", acc.bytes}});
    }
    tes.push_back({{"name", te.tensor->name},
                   {"shape", te.tensor->shape},
                   {"dtype", dtype_name(te.tensor->dtype)},
                   {"class", te_class_name(te.te_class)},
                   {"intensity", intensity_name(te.intensity)},
                   {"flops", te.flops},
                   {"bytes", te.bytes},
                   {"arithmetic_intensity", te.arithmetic_intensity},
                   {"parallelism", te.parallelism},
                   {"reduction_size", te.reduction_size},
                   {"output_bytes", te.output_bytes},
                   {"reads", reads}});
  }
  json tensors = json::array();
  for (const TensorReuse& r : a.tensors) {
    json readers = json::array();
    for (int p : r.readers) readers.push_back(a.tes[size_t(p)].tensor->name);
    tensors.push_back({{"name", r.tensor->name},
                       {"placeholder", r.tensor->is_placeholder()},
                       {"output", r.is_output},
                       {"bytes", r.bytes},
                       {"readers", readers},
                       {"bytes_read", r.bytes_read},
                       {"live_first", r.live_first},
                       {"live_last", r.live_last}});
  }
  return {{"program", a.program_name},
          {"target", target},
          {"total_flops", a.total_flops},
          {"computes", tes},
          {"tensors", tensors}};
}

}  // namespace ingot
