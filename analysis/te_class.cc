#include "analysis/te_class.h"

#include <sstream>

namespace ingot {

const char* te_class_name(TeClass c) {
  switch (c) {
    case TeClass::kOneToOne: return "one-to-one";
    case TeClass::kOneToMany: return "one-to-many";
    case TeClass::kManyToMany: return "many-to-many";
    case TeClass::kReorganize: return "reorganize";
    case TeClass::kShuffle: return "shuffle";
  }
  return "?";
}

const char* intensity_name(Intensity i) { return i == Intensity::kCompute ? "compute" : "memory"; }

TeClass classify_te(const Tensor& compute, const std::vector<TensorAccess>& accesses) {
  if (compute->reduction()) return TeClass::kManyToMany;
  AccessKind widest = AccessKind::kIdentity;
  for (const TensorAccess& a : accesses) widest = std::max(widest, a.kind);
  switch (widest) {
    case AccessKind::kGather:
    case AccessKind::kNonAffine: return TeClass::kShuffle;
    case AccessKind::kRemap:
    case AccessKind::kReduce: return TeClass::kReorganize;  // kReduce needs a reduce axis: not reached
    case AccessKind::kBroadcast: return TeClass::kOneToMany;
    case AccessKind::kIdentity: return TeClass::kOneToOne;
  }
  return TeClass::kOneToOne;
}

TeClass classify_te(const Tensor& compute) { return classify_te(compute, analyze_accesses(compute)); }

double arithmetic_intensity(int64_t flops, int64_t bytes) { return bytes > 0 ? double(flops) / double(bytes) : 0.0; }

Intensity classify_intensity(double arithmetic_intensity, const Target& target) {
  return arithmetic_intensity >= target.ridge_flops_per_byte() ? Intensity::kCompute : Intensity::kMemory;
}

std::string format_te_classes(const Program& program) {
  std::ostringstream os;
  for (const Tensor& t : program.tensors()) {
    if (t->is_placeholder()) continue;
    std::vector<TensorAccess> accesses = analyze_accesses(t);
    os << t->name << ": " << te_class_name(classify_te(t, accesses)) << " (";
    for (size_t i = 0; i < accesses.size(); ++i)
      os << (i ? ", " : "") << accesses[i].tensor->name << ": " << access_kind_name(accesses[i].kind);
    os << ")\n";
  }
  return os.str();
}

}  // namespace ingot
