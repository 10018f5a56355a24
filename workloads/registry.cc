#include "workloads/registry.h"

#include <algorithm>
#include <stdexcept>

#include "ir/flops.h"
#include "ir/functor.h"
#include "workloads/bert.h"
#include "workloads/efficientnet.h"
#include "workloads/examples.h"
#include "workloads/lstm.h"
#include "workloads/mlp.h"
#include "workloads/mmoe.h"
#include "workloads/resnext.h"
#include "workloads/scale_into_weights.h"
#include "workloads/swin.h"
#include "workloads/tasks.h"

namespace ingot {

namespace {

// A registry entry: the public description plus how to build from complete parameters.
struct Entry {
  WorkloadInfo info;
  std::function<Program(const WorkloadParams&)> build;
};

MlpSizes mlp_sizes(const WorkloadParams& p) { return {p.at("batch"), p.at("in"), p.at("hidden"), p.at("out")}; }
LstmSizes lstm_sizes(const WorkloadParams& p) { return {p.at("layers"), p.at("steps"), p.at("hidden"), p.at("input")}; }
ResnextSizes resnext_sizes(const WorkloadParams& p) {
  return {p.at("image"),  {p.at("blocks1"), p.at("blocks2"), p.at("blocks3"), p.at("blocks4")},
          p.at("groups"), p.at("width_per_group"),
          p.at("base"),   p.at("classes")};
}
EfficientnetSizes efficientnet_sizes(const WorkloadParams& p) {
  return {p.at("image"), p.at("classes"), p.at("channel_divisor"), p.at("max_stage_layers")};
}
SwinSizes swin_sizes(const WorkloadParams& p) {
  return {p.at("image"),
          p.at("patch"),
          p.at("window"),
          p.at("embed"),
          {p.at("depth1"), p.at("depth2"), p.at("depth3"), p.at("depth4")},
          p.at("heads"),
          p.at("mlp_ratio"),
          p.at("classes")};
}
BertSizes bert_sizes(const WorkloadParams& p) {
  return {p.at("layers"), p.at("hidden"), p.at("heads"), p.at("intermediate"), p.at("sequence")};
}
MmoeSizes mmoe_sizes(const WorkloadParams& p) {
  return {p.at("batch"), p.at("input"), p.at("experts"), p.at("expert_units"), p.at("tasks"), p.at("tower_units")};
}

std::vector<Entry> make_entries() {
  std::vector<Entry> all;
  auto add = [&](std::string name, std::string description, std::vector<WorkloadParameter> parameters,
                 WorkloadParams small, std::function<Program(const WorkloadParams&)> build,
                 std::function<std::vector<std::string>(const WorkloadParams&)> weights,
                 std::function<InputRanges(const WorkloadParams&)> ranges = nullptr) {
    Entry e;
    e.info.name = std::move(name);
    e.info.description = std::move(description);
    e.info.parameters = std::move(parameters);
    e.info.small = std::move(small);
    e.info.weight_names = std::move(weights);
    e.info.input_ranges = ranges ? std::move(ranges) : [](const WorkloadParams&) { return InputRanges{}; };
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
      [](const WorkloadParams& p) { return mlp(mlp_sizes(p)); }, fixed(mlp_weight_names()),
      [](const WorkloadParams& p) { return mlp_input_ranges(mlp_sizes(p)); });

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
      [](const WorkloadParams& p) { return lstm_weight_names(lstm_sizes(p)); },
      [](const WorkloadParams& p) { return lstm_input_ranges(lstm_sizes(p)); });

  // The Souffle paper's models at the paper's sizes (defaults), batch 1, fp32.
  const ResnextSizes resnext_default, resnext_small = ResnextSizes::small();
  auto resnext_params = [](const ResnextSizes& s) {
    return WorkloadParams{{"image", s.image},
                          {"blocks1", s.blocks[0]},
                          {"blocks2", s.blocks[1]},
                          {"blocks3", s.blocks[2]},
                          {"blocks4", s.blocks[3]},
                          {"groups", s.groups},
                          {"width_per_group", s.width_per_group},
                          {"base", s.base},
                          {"classes", s.classes}};
  };
  const WorkloadParams resnext_defaults = resnext_params(resnext_default);
  add(
      "resnext", "ResNeXt-101 64x4d (torchvision layout), 224x224 image, batch 1, folded batch norm",
      {{"image", resnext_defaults.at("image"), "height and width of the input image"},
       {"blocks1", resnext_defaults.at("blocks1"), "bottleneck blocks of stage 1"},
       {"blocks2", resnext_defaults.at("blocks2"), "bottleneck blocks of stage 2"},
       {"blocks3", resnext_defaults.at("blocks3"), "bottleneck blocks of stage 3"},
       {"blocks4", resnext_defaults.at("blocks4"), "bottleneck blocks of stage 4"},
       {"groups", resnext_defaults.at("groups"), "groups of the 3x3 convolutions (cardinality)"},
       {"width_per_group", resnext_defaults.at("width_per_group"), "channels per group in stage 1"},
       {"base", resnext_defaults.at("base"), "stem channels; stage s outputs 4 * base * 2^s"},
       {"classes", resnext_defaults.at("classes"), "classifier outputs"}},
      resnext_params(resnext_small), [](const WorkloadParams& p) { return resnext(resnext_sizes(p)); },
      [](const WorkloadParams& p) { return resnext_weight_names(resnext_sizes(p)); },
      [](const WorkloadParams& p) { return resnext_input_ranges(resnext_sizes(p)); });

  const EfficientnetSizes efficientnet_default, efficientnet_small = EfficientnetSizes::small();
  add(
      "efficientnet", "EfficientNet-B0 (torchvision layout), 224x224 image, batch 1, folded batch norm",
      {{"image", efficientnet_default.image, "height and width of the input image"},
       {"classes", efficientnet_default.classes, "classifier outputs"},
       {"channel_divisor", efficientnet_default.channel_divisor, "every B0 channel count is divided by this"},
       {"max_stage_layers", efficientnet_default.max_stage_layers, "MBConv blocks kept per stage (B0: up to 4)"}},
      {{"image", efficientnet_small.image},
       {"classes", efficientnet_small.classes},
       {"channel_divisor", efficientnet_small.channel_divisor},
       {"max_stage_layers", efficientnet_small.max_stage_layers}},
      [](const WorkloadParams& p) { return efficientnet(efficientnet_sizes(p)); },
      [](const WorkloadParams& p) { return efficientnet_weight_names(efficientnet_sizes(p)); },
      [](const WorkloadParams& p) { return efficientnet_input_ranges(efficientnet_sizes(p)); });

  const SwinSizes swin_default, swin_small = SwinSizes::small();
  auto swin_params = [](const SwinSizes& s) {
    return WorkloadParams{{"image", s.image},         {"patch", s.patch},      {"window", s.window},
                          {"embed", s.embed},         {"depth1", s.depths[0]}, {"depth2", s.depths[1]},
                          {"depth3", s.depths[2]},    {"depth4", s.depths[3]}, {"heads", s.heads},
                          {"mlp_ratio", s.mlp_ratio}, {"classes", s.classes}};
  };
  const WorkloadParams swin_defaults = swin_params(swin_default);
  add(
      "swin", "Swin-B (torchvision swin_b layout): patch 4, window 7, 224x224 image, batch 1",
      {{"image", swin_defaults.at("image"), "height and width of the input image"},
       {"patch", swin_defaults.at("patch"), "patch size of the embedding"},
       {"window", swin_defaults.at("window"), "attention window side"},
       {"embed", swin_defaults.at("embed"), "channels of stage 1, doubled per stage"},
       {"depth1", swin_defaults.at("depth1"), "transformer blocks of stage 1"},
       {"depth2", swin_defaults.at("depth2"), "transformer blocks of stage 2"},
       {"depth3", swin_defaults.at("depth3"), "transformer blocks of stage 3"},
       {"depth4", swin_defaults.at("depth4"), "transformer blocks of stage 4"},
       {"heads", swin_defaults.at("heads"), "attention heads of stage 1, doubled per stage"},
       {"mlp_ratio", swin_defaults.at("mlp_ratio"), "MLP width in multiples of the channels"},
       {"classes", swin_defaults.at("classes"), "classifier outputs"}},
      swin_params(swin_small), [](const WorkloadParams& p) { return swin(swin_sizes(p)); },
      [](const WorkloadParams& p) { return swin_weight_names(swin_sizes(p)); },
      [](const WorkloadParams& p) { return swin_input_ranges(swin_sizes(p)); });

  const BertSizes bert_default, bert_small = BertSizes::small();
  add(
      "bert", "BERT-base encoder (12 layers, hidden 768, 12 heads), sequence 128, batch 1, input = embeddings",
      {{"layers", bert_default.layers, "encoder layers"},
       {"hidden", bert_default.hidden, "hidden size"},
       {"heads", bert_default.heads, "attention heads"},
       {"intermediate", bert_default.intermediate, "width of the feed-forward layer"},
       {"sequence", bert_default.sequence, "tokens"}},
      {{"layers", bert_small.layers},
       {"hidden", bert_small.hidden},
       {"heads", bert_small.heads},
       {"intermediate", bert_small.intermediate},
       {"sequence", bert_small.sequence}},
      [](const WorkloadParams& p) { return bert(bert_sizes(p)); },
      [](const WorkloadParams& p) { return bert_weight_names(bert_sizes(p)); },
      [](const WorkloadParams& p) { return bert_input_ranges(bert_sizes(p)); });

  const MmoeSizes mmoe_default, mmoe_small = MmoeSizes::small();
  add(
      "mmoe", "multi-gate mixture of experts: 8 experts of 16 units, 2 tasks with softmax gates and towers",
      {{"batch", mmoe_default.batch, "rows of the input"},
       {"input", mmoe_default.input, "input features"},
       {"experts", mmoe_default.experts, "shared experts"},
       {"expert_units", mmoe_default.expert_units, "units per expert"},
       {"tasks", mmoe_default.tasks, "tasks (one gate and tower each)"},
       {"tower_units", mmoe_default.tower_units, "hidden units of each tower"}},
      {{"batch", mmoe_small.batch},
       {"input", mmoe_small.input},
       {"experts", mmoe_small.experts},
       {"expert_units", mmoe_small.expert_units},
       {"tasks", mmoe_small.tasks},
       {"tower_units", mmoe_small.tower_units}},
      [](const WorkloadParams& p) { return mmoe(mmoe_sizes(p)); },
      [](const WorkloadParams& p) { return mmoe_weight_names(mmoe_sizes(p)); },
      [](const WorkloadParams& p) { return mmoe_input_ranges(mmoe_sizes(p)); });

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

  // Blocks cut out of the paper models, for cost-model data sets (workloads/tasks.h).
  for (const TaskWorkload& task : task_workloads())
    add(task.name, task.description, task.parameters, task.small, task.build, task.weight_names, task.input_ranges);

  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) { return a.info.name < b.info.name; });
  for (Entry& e : all) {
    std::string name = e.info.name;
    e.info.flops = [name](const WorkloadParams& p) { return count_flops(make_workload(name, p)); };
    auto ranges_of_complete = e.info.input_ranges;
    e.info.input_ranges = [name, ranges_of_complete](const WorkloadParams& p) {
      return ranges_of_complete(complete_workload_params(name, p));
    };
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

InputRanges workload_input_ranges(const std::string& name, const WorkloadParams& params) {
  return find_entry(name).info.input_ranges(params);
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
  return fold_scales_into_weights(find_entry(name).build(complete_workload_params(name, params)));
}

int64_t count_flops(const Program& program) { return program_flops(program); }

}  // namespace ingot
