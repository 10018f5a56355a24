#include "workloads/registry.h"

#include <algorithm>
#include <stdexcept>

#include "ir/functor.h"
#include "workloads/examples.h"
#include "workloads/lstm.h"
#include "workloads/mlp.h"

namespace ingot {

namespace {

// A registry entry: the public description plus how to build from complete parameters.
struct Entry {
  WorkloadInfo info;
  std::function<Program(const WorkloadParams&)> build;
};

MlpSizes mlp_sizes(const WorkloadParams& p) { return {p.at("batch"), p.at("in"), p.at("hidden"), p.at("out")}; }
LstmSizes lstm_sizes(const WorkloadParams& p) { return {p.at("layers"), p.at("steps"), p.at("hidden"), p.at("input")}; }

std::vector<Entry> make_entries() {
  std::vector<Entry> all;
  auto add = [&](std::string name, std::string description, std::vector<WorkloadParameter> parameters,
                 WorkloadParams small, std::function<Program(const WorkloadParams&)> build,
                 std::function<std::vector<std::string>(const WorkloadParams&)> weights) {
    Entry e;
    e.info.name = std::move(name);
    e.info.description = std::move(description);
    e.info.parameters = std::move(parameters);
    e.info.small = std::move(small);
    e.info.weight_names = std::move(weights);
    e.build = std::move(build);
    all.push_back(std::move(e));
  };
  auto fixed = [](std::vector<std::string> names) { return [names](const WorkloadParams&) { return names; }; };

  const MlpSizes mlp_default, mlp_small = MlpSizes::small();
  add(
      "mlp", "2-layer MLP: Y = gelu(X * W1 + b1) * W2 + b2, exact (erf) GELU",
      {{"batch", mlp_default.batch, "rows of X"},
       {"in", mlp_default.in, "features of X"},
       {"hidden", mlp_default.hidden, "width of the GELU layer"},
       {"out", mlp_default.out, "features of Y"}},
      {{"batch", mlp_small.batch}, {"in", mlp_small.in}, {"hidden", mlp_small.hidden}, {"out", mlp_small.out}},
      [](const WorkloadParams& p) { return mlp(mlp_sizes(p)); }, fixed(mlp_weight_names()));

  const LstmSizes lstm_default, lstm_small = LstmSizes::small();
  add(
      "lstm", "stacked LSTM of the Souffle paper, batch 1, unrolled over layers and time steps",
      {{"layers", lstm_default.layers, "stacked LSTM layers"},
       {"steps", lstm_default.steps, "time steps"},
       {"hidden", lstm_default.hidden, "hidden units per layer"},
       {"input", lstm_default.input, "features of each input step"}},
      {{"layers", lstm_small.layers},
       {"steps", lstm_small.steps},
       {"hidden", lstm_small.hidden},
       {"input", lstm_small.input}},
      [](const WorkloadParams& p) { return lstm(lstm_sizes(p)); },
      [](const WorkloadParams& p) { return lstm_weight_names(lstm_sizes(p)); });

  // The examples keep the sizes of workloads/examples.cc (default and small) so that both names agree.
  add(
      "matmul", "C = A * B",
      {{"m", 512, "rows of A and C"}, {"n", 512, "columns of B and C"}, {"k", 512, "reduction length"}},
      {{"m", 24}, {"n", 20}, {"k", 16}},
      [](const WorkloadParams& p) { return matmul(p.at("m"), p.at("n"), p.at("k")); }, fixed({"B"}));
  add(
      "matmul_bias_relu", "D = relu(A * B + bias)",
      {{"m", 512, "rows of A and D"}, {"n", 512, "columns of B and D"}, {"k", 512, "reduction length"}},
      {{"m", 24}, {"n", 20}, {"k", 16}},
      [](const WorkloadParams& p) { return matmul_bias_relu(p.at("m"), p.at("n"), p.at("k")); }, fixed({"B", "bias"}));
  add(
      "softmax", "row-wise softmax", {{"rows", 1024, "rows of X"}, {"cols", 1024, "columns of X"}},
      {{"rows", 6}, {"cols", 20}}, [](const WorkloadParams& p) { return softmax(p.at("rows"), p.at("cols")); },
      fixed({}));
  add(
      "two_gemm", "Y = relu(X * W1) * W2",
      {{"m", 128, "rows of X and Y"},
       {"hidden", 1024, "columns of W1, rows of W2"},
       {"k", 512, "features of X"},
       {"n", 512, "features of Y"}},
      {{"m", 8}, {"hidden", 24}, {"k", 16}, {"n", 12}},
      [](const WorkloadParams& p) { return two_gemm(p.at("m"), p.at("hidden"), p.at("k"), p.at("n")); },
      fixed({"W1", "W2"}));

  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) { return a.info.name < b.info.name; });
  for (Entry& e : all) {
    std::string name = e.info.name;
    e.info.flops = [name](const WorkloadParams& p) { return count_flops(make_workload(name, p)); };
    auto weights_of_complete = e.info.weight_names;
    e.info.weight_names = [name, weights_of_complete](const WorkloadParams& p) {
      return weights_of_complete(complete_workload_params(name, p));
    };
    e.info.parameter_count = [name, weights_of_complete](const WorkloadParams& p) {
      Program program = make_workload(name, p);
      int64_t count = 0;
      for (const std::string& w : weights_of_complete(complete_workload_params(name, p))) {
        Tensor t = program.find(w);
        if (!t || !t->is_placeholder())
          throw std::logic_error("workload '" + name + "' names weight '" + w + "', which is not a placeholder");
        count += t->num_elements();
      }
      return count;
    };
  }
  return all;
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> all = make_entries();
  return all;
}

const Entry& find_entry(const std::string& name) {
  std::string known;
  for (const Entry& e : entries()) {
    if (e.info.name == name) return e;
    known += (known.empty() ? "" : ", ") + e.info.name;
  }
  throw std::invalid_argument("unknown workload '" + name + "' (known: " + known + ")");
}

int64_t flops_per_element(const Expr& e) {
  int64_t ops = 0;
  for_each_node(e, [&](const Expr& node) {
    switch (node.kind()) {
      case ExprKind::kBinary:
      case ExprKind::kCall:
        if (is_float(node.dtype())) ++ops;
        break;
      case ExprKind::kCompare:
        if (is_float(node.as<CompareNode>()->a.dtype())) ++ops;
        break;
      default: break;
    }
  });
  return ops;
}

}  // namespace

const std::vector<WorkloadInfo>& list_workloads() {
  static const std::vector<WorkloadInfo> infos = [] {
    std::vector<WorkloadInfo> out;
    for (const Entry& e : entries()) out.push_back(e.info);
    return out;
  }();
  return infos;
}

const WorkloadInfo* find_workload(const std::string& name) {
  for (const WorkloadInfo& info : list_workloads())
    if (info.name == name) return &info;
  return nullptr;
}

WorkloadParams complete_workload_params(const std::string& name, const WorkloadParams& params) {
  const WorkloadInfo& info = find_entry(name).info;
  std::string known;
  for (const WorkloadParameter& p : info.parameters) known += (known.empty() ? "" : ", ") + p.name;
  for (const auto& [key, value] : params) {
    auto it = std::find_if(info.parameters.begin(), info.parameters.end(),
                           [&](const WorkloadParameter& p) { return p.name == key; });
    if (it == info.parameters.end())
      throw std::invalid_argument("workload '" + name + "' has no parameter '" + key + "' (known: " + known + ")");
    if (value <= 0)
      throw std::invalid_argument("workload '" + name + "': parameter '" + key + "' must be positive, got " +
                                  std::to_string(value));
  }
  WorkloadParams complete = params;
  for (const WorkloadParameter& p : info.parameters) complete.emplace(p.name, p.default_value);
  return complete;
}

Program make_workload(const std::string& name, const WorkloadParams& params) {
  return find_entry(name).build(complete_workload_params(name, params));
}

int64_t count_flops(const Program& program) {
  int64_t total = 0;
  for (const Tensor& t : program.computes()) {
    int64_t per_element = 0;
    if (const ReduceNode* r = t->reduction()) {
      int64_t steps = 1;
      for (const IterVar& k : r->axes) steps *= k.extent;
      per_element = steps * (flops_per_element(r->source) + 1);
    } else {
      per_element = flops_per_element(t->body);
    }
    total += t->num_elements() * per_element;
  }
  return total;
}

}  // namespace ingot
