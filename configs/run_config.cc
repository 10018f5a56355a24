#include "configs/run_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>

#include "ir/scalar_text.h"
#include "ir/yaml_values.h"
#include "workloads/onnx_import.h"

namespace ingot {

namespace {

// Turns YAML nodes into checked values (ir/yaml_values.h), throwing ConfigError at the node's position, and makes
// the config's paths absolute.
class Reader : public YamlValues<ConfigError> {
 public:
  Reader(std::string source, std::string base_directory)
      : YamlValues(std::move(source)), base_directory_(std::move(base_directory)) {}

  // A path from the config, made absolute against the base directory.
  std::string absolute_path(const std::string& path) const {
    std::filesystem::path p(path);
    if (p.is_relative()) p = std::filesystem::path(base_directory_) / p;
    return std::filesystem::absolute(p).lexically_normal().string();
  }

 private:
  std::string base_directory_;
};

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

enum class ValueType { kInteger, kNumber, kString, kIntegerMap, kIntegerListMap };

const char* type_name(ValueType t) {
  switch (t) {
    case ValueType::kInteger: return "integer";
    case ValueType::kNumber: return "number";
    case ValueType::kString: return "string";
    case ValueType::kIntegerMap: return "map of integers";
    case ValueType::kIntegerListMap: return "map of integer lists";
  }
  return "?";
}

// One accepted key: how to read it into a RunConfig and how to show its value (docs, format_run_config).
struct KeySpec {
  std::string path;
  ValueType type;
  std::function<void(const Reader&, const YAML::Node&, RunConfig&)> read;
  std::function<std::string(const RunConfig&)> show;
};

// field is a generic lambda returning a reference to the field, so it serves both const and mutable configs.
template <class Field>
KeySpec integer_key(std::string path, Field field, int64_t min, int64_t max = INT_MAX) {
  return {path, ValueType::kInteger,
          [=](const Reader& r, const YAML::Node& v, RunConfig& c) {
            auto& f = field(c);
            f = static_cast<std::remove_reference_t<decltype(f)>>(r.integer(v, path, min, max));
          },
          [=](const RunConfig& c) { return std::to_string(field(c)); }};
}

template <class Field>
KeySpec number_key(std::string path, Field field, double min, bool min_is_exclusive,
                   double max = std::numeric_limits<double>::infinity()) {
  return {path, ValueType::kNumber,
          [=](const Reader& r, const YAML::Node& v, RunConfig& c) {
            const double value = r.number(v, path, min, min_is_exclusive);
            if (value > max) r.fail(v.Mark(), path, "must be at most " + show_number(max) + ", got " + v.Scalar());
            field(c) = value;
          },
          [=](const RunConfig& c) { return show_number(field(c)); }};
}

// A string; when choices is not empty, it must be one of them (what names the kind of thing, for errors).
template <class Field>
KeySpec string_key(std::string path, Field field, bool allow_empty, std::vector<std::string> choices = {},
                   std::string what = "") {
  return {path, ValueType::kString,
          [=](const Reader& r, const YAML::Node& v, RunConfig& c) {
            std::string s = r.string(v, path);
            if (!allow_empty && s.empty()) r.fail(v.Mark(), path, "must not be empty");
            if (!choices.empty() && std::find(choices.begin(), choices.end(), s) == choices.end())
              r.fail(v.Mark(), path, "unknown " + what + " '" + s + "' (known: " + join(choices) + ")");
            field(c) = s;
          },
          [=](const RunConfig& c) { return field(c); }};
}

#define INGOT_FIELD(member) \
  [](auto& c) -> auto& { return c.member; }

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (const WorkloadInfo& w : list_workloads()) names.push_back(w.name);
  return names;
}

const std::vector<KeySpec>& key_specs() {
  static const std::vector<KeySpec> specs = {
      // workload.name and workload.params are checked against the registry once the whole file is read,
      // because params may come before name.
      string_key("workload.name", INGOT_FIELD(workload.name), false),
      {"workload.params", ValueType::kIntegerMap, nullptr,
       [](const RunConfig& c) {
         std::string out;
         for (const auto& [k, v] : c.workload.params) out += (out.empty() ? "" : ", ") + k + ": " + std::to_string(v);
         return "{" + out + "}";
       }},
      string_key("workload.size", INGOT_FIELD(workload.size), false, {"small", "default"}, "size"),
      // Whether the file exists and imports is checked once the whole file is read, with the other workload keys.
      {"workload.onnx", ValueType::kString,
       [](const Reader& r, const YAML::Node& v, RunConfig& c) {
         std::string path = r.string(v, "workload.onnx");
         if (path.empty()) r.fail(v.Mark(), "workload.onnx", "must not be empty");
         c.workload.onnx = r.absolute_path(path);
       },
       [](const RunConfig& c) { return c.workload.onnx; }},
      // Read by read_bind; checked against the model's inputs when it is imported.
      {"workload.bind", ValueType::kIntegerListMap, nullptr,
       [](const RunConfig& c) {
         std::string out;
         for (const auto& [name, b] : c.workload.bind) {
           std::string values;
           for (int64_t v : b.values) values += (values.empty() ? "" : ", ") + std::to_string(v);
           out += (out.empty() ? "" : ", ") + name + ": " + (b.scalar ? values : "[" + values + "]");
         }
         return "{" + out + "}";
       }},
      // A workload's precision: bf16 rewrites its dense layers (workloads/bf16_products.h); the tune job refuses it
      // on a CPU without AVX-512 BF16.
      string_key("precision", INGOT_FIELD(workload.precision), false, {"fp32", "bf16"}, "precision"),
      // The built-in targets (analysis/target.h); a GPU is tuned on this machine's GPU, refused where none is usable.
      string_key("target.kind", INGOT_FIELD(target.kind), false, {"cpu", "sm_80", "sm_90"}, "target kind"),
      integer_key("target.threads", INGOT_FIELD(target.threads), 0),
      string_key("target.compiler", INGOT_FIELD(target.compiler), true),
      string_key("target.flags", INGOT_FIELD(target.flags), true),
      string_key("target.isa", INGOT_FIELD(target.isa), false, {"native", "avx512", "avx2", "generic"}, "ISA"),
      integer_key("budget.trials", INGOT_FIELD(budget.trials), 0, INT64_MAX),
      number_key("budget.minutes", INGOT_FIELD(budget.minutes), 0, false),
      integer_key("seed", INGOT_FIELD(seed), 0, INT64_MAX),
      string_key("database", INGOT_FIELD(database), false),
      integer_key("measure.warmup_runs", INGOT_FIELD(measure.warmup_runs), 0),
      number_key("measure.min_repeat_ms", INGOT_FIELD(measure.min_repeat_ms), 0, false),
      integer_key("measure.min_repeats", INGOT_FIELD(measure.min_repeats), 1),
      integer_key("measure.max_repeats", INGOT_FIELD(measure.max_repeats), 1),
      number_key("measure.build_timeout_s", INGOT_FIELD(measure.build_timeout_s), 0, true),
      number_key("measure.run_timeout_s", INGOT_FIELD(measure.run_timeout_s), 0, true),
      integer_key("measure.build_workers", INGOT_FIELD(measure.build_workers), 0),
      number_key("measure.rtol", INGOT_FIELD(measure.rtol), 0, false),
      number_key("measure.atol", INGOT_FIELD(measure.atol), 0, false),
      integer_key("measure.side_by_side", INGOT_FIELD(measure.side_by_side), 0, 64),
      integer_key("measure.side_by_side_rounds", INGOT_FIELD(measure.side_by_side_rounds), 1, 100),
      string_key("search.strategy", INGOT_FIELD(search.strategy), false, {"evolutionary", "random", "ranked"},
                 "search strategy"),
      string_key("search.fusion", INGOT_FIELD(search.fusion), false, {"unfused", "rules", "subgraph", "global"},
                 "fusion strategy"),
      string_key("search.cost_model", INGOT_FIELD(search.cost_model), false, {"xgboost", "none"}, "cost model"),
      integer_key("search.batch", INGOT_FIELD(search.batch), 0, 4096),
      integer_key("search.population", INGOT_FIELD(search.population), 2, 100000),
      integer_key("search.generations", INGOT_FIELD(search.generations), 0, 1000),
      number_key("search.mutation_probability", INGOT_FIELD(search.mutation_probability), 0, false, 1),
      number_key("search.epsilon", INGOT_FIELD(search.epsilon), 0, false, 1),
      string_key("search.scope", INGOT_FIELD(search.scope), false, {"program", "tasks"}, "search scope"),
      integer_key("search.partition_moves", INGOT_FIELD(search.partition_moves), 0, 100000),
  };
  return specs;
}

#undef INGOT_FIELD

const KeySpec* find_spec(const std::string& path) {
  for (const KeySpec& s : key_specs())
    if (s.path == path) return &s;
  return nullptr;
}

// The names directly under prefix ("" for the top level), in spec order.
std::vector<std::string> children_of(const std::string& prefix) {
  std::vector<std::string> out;
  for (const KeySpec& s : key_specs()) {
    if (!prefix.empty() && s.path.compare(0, prefix.size() + 1, prefix + ".") != 0) continue;
    std::string rest = prefix.empty() ? s.path : s.path.substr(prefix.size() + 1);
    std::string child = rest.substr(0, rest.find('.'));
    if (std::find(out.begin(), out.end(), child) == out.end()) out.push_back(child);
  }
  return out;
}

// Where things were found, for the checks that need the whole file.
struct Positions {
  std::map<std::string, YAML::Mark> keys;    // mark of each key path seen (sections too)
  std::map<std::string, YAML::Mark> values;  // mark of each leaf value seen
};

// Reads workload.params: names and positive values; the names are checked against the workload later.
void read_params(const Reader& r, const YAML::Node& v, RunConfig& c, Positions& pos) {
  const std::string path = "workload.params";
  if (v.Type() == YAML::NodeType::Null) return;
  if (v.Type() != YAML::NodeType::Map)
    r.fail(v.Mark(), path, "expected a mapping of parameter names to integers, got " + Reader::describe(v));
  for (const auto& entry : v) {
    const YAML::Node key = entry.first, value = entry.second;
    if (key.Type() != YAML::NodeType::Scalar) r.fail(key.Mark(), path, "a parameter name must be a plain name");
    const std::string name = key.Scalar(), key_path = path + "." + name;
    if (pos.keys.count(key_path)) r.fail(key.Mark(), key_path, "duplicate key");
    pos.keys[key_path] = key.Mark();
    if (value.Type() == YAML::NodeType::Null) r.fail(key.Mark(), key_path, "expected an integer, got nothing");
    c.workload.params[name] = r.integer(value, key_path, 1, INT64_MAX);
  }
}

// Reads workload.bind: graph input names with an integer or a non-empty list of integers each; the names are
// checked against the model when it is imported.
void read_bind(const Reader& r, const YAML::Node& v, RunConfig& c, Positions& pos) {
  const std::string path = "workload.bind";
  if (v.Type() == YAML::NodeType::Null) return;
  if (v.Type() != YAML::NodeType::Map)
    r.fail(v.Mark(), path, "expected a mapping of graph input names to integer lists, got " + Reader::describe(v));
  for (const auto& entry : v) {
    const YAML::Node key = entry.first, value = entry.second;
    if (key.Type() != YAML::NodeType::Scalar) r.fail(key.Mark(), path, "an input name must be a plain name");
    const std::string name = key.Scalar(), key_path = path + "." + name;
    if (pos.keys.count(key_path)) r.fail(key.Mark(), key_path, "duplicate key");
    pos.keys[key_path] = key.Mark();
    BoundInputConfig bound;
    if (value.Type() == YAML::NodeType::Scalar) {
      bound.scalar = true;
      bound.values.push_back(r.integer(value, key_path, INT64_MIN, INT64_MAX));
    } else if (value.Type() == YAML::NodeType::Sequence) {
      if (value.size() == 0) r.fail(value.Mark(), key_path, "expected at least one integer, got an empty list");
      for (const YAML::Node& element : value)
        bound.values.push_back(r.integer(element, key_path, INT64_MIN, INT64_MAX));
    } else {
      r.fail(value.Type() == YAML::NodeType::Null ? key.Mark() : value.Mark(), key_path,
             "expected an integer or a list of integers, got " + Reader::describe(value));
    }
    c.workload.bind[name] = std::move(bound);
  }
}

void read_section(const Reader& r, const YAML::Node& map, const std::string& prefix, RunConfig& c, Positions& pos) {
  for (const auto& entry : map) {
    const YAML::Node key = entry.first, value = entry.second;
    if (key.Type() != YAML::NodeType::Scalar)
      r.fail(key.Mark(), prefix, "keys must be plain names, got " + Reader::describe(key));
    const std::string path = prefix.empty() ? key.Scalar() : prefix + "." + key.Scalar();
    if (pos.keys.count(path)) r.fail(key.Mark(), path, "duplicate key");
    pos.keys[path] = key.Mark();
    if (path == "workload.params") {
      read_params(r, value, c, pos);
    } else if (path == "workload.bind") {
      read_bind(r, value, c, pos);
    } else if (const KeySpec* spec = find_spec(path)) {
      // A key without a value has no position of its own (yaml-cpp marks where the next token starts).
      if (value.Type() == YAML::NodeType::Null)
        r.fail(key.Mark(), path,
               std::string("expected ") + (spec->type == ValueType::kInteger ? "an " : "a ") + type_name(spec->type) +
                   ", got nothing" + (spec->type == ValueType::kString ? " (write \"\" for an empty string)" : ""));
      pos.values[path] = value.Mark();
      spec->read(r, value, c);
    } else if (std::vector<std::string> children = children_of(path); !children.empty()) {
      // An empty section ("measure:" alone) means all defaults.
      if (value.Type() == YAML::NodeType::Null) continue;
      if (value.Type() != YAML::NodeType::Map)
        r.fail(value.Mark(), path, "expected a mapping (keys: " + join(children) + "), got " + Reader::describe(value));
      read_section(r, value, path, c, pos);
    } else {
      r.fail(key.Mark(), path, "unknown key (known: " + join(children_of(prefix)) + ")");
    }
  }
}

// Where a key was written; a key left out is reported where the document starts.
YAML::Mark key_mark(const YAML::Node& root, const Positions& pos, const std::string& path) {
  auto it = pos.keys.find(path);
  return it != pos.keys.end() ? it->second : root.Mark();
}

// An ONNX file: present, importable and without registry parameters (its shapes are fixed by the model).
void check_onnx(const Reader& r, const RunConfig& c, const Positions& pos) {
  for (const char* sized : {"workload.params", "workload.size"})
    if (pos.keys.count(sized))
      r.fail(pos.keys.at(sized), sized, "not used with workload.onnx (an ONNX model's shapes are fixed by the model)");
  const YAML::Mark at = pos.values.at("workload.onnx");
  const std::string& path = c.workload.onnx;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) r.fail(at, "workload.onnx", "no such file: " + path);
  if (!std::filesystem::is_regular_file(path, ec)) r.fail(at, "workload.onnx", "not a file: " + path);
  try {
    import_onnx(path, onnx_bound_inputs(c.workload));
  } catch (const OnnxBindError& e) {
    const std::string key = "workload.bind." + e.input();
    r.fail(pos.keys.count(key) ? pos.keys.at(key) : at, key, e.what());
  } catch (const OnnxConstantInputError& e) {
    r.fail(at, "workload.onnx",
           std::string("does not import: ") + e.what() + " (give its value with workload.bind: {" + e.input() +
               ": [...]})");
  } catch (const std::exception& e) {
    // The importer's messages name the file.
    r.fail(at, "workload.onnx", std::string("does not import: ") + e.what());
  }
}

void check_registry_workload(const Reader& r, const RunConfig& c, const Positions& pos) {
  const WorkloadInfo* info = find_workload(c.workload.name);
  if (!info)
    r.fail(pos.values.at("workload.name"), "workload.name",
           "unknown workload '" + c.workload.name + "' (known: " + join(workload_names()) + ")");
  std::vector<std::string> known;
  for (const WorkloadParameter& p : info->parameters) known.push_back(p.name);
  for (const auto& [name, value] : c.workload.params)
    if (std::find(known.begin(), known.end(), name) == known.end())
      r.fail(pos.keys.at("workload.params." + name), "workload.params." + name,
             "unknown parameter of workload '" + info->name + "' (known: " + join(known) + ")");
}

void check_budget_and_measure(const Reader& r, const YAML::Node& root, const RunConfig& c, const Positions& pos) {
  if (c.budget.trials == 0 && c.budget.minutes == 0)
    r.fail(key_mark(root, pos, "budget"), "budget",
           "set trials or minutes above 0 (the run stops at whichever is reached first; without either it would "
           "never stop)");
  if (c.measure.max_repeats < c.measure.min_repeats) {
    std::string at = pos.values.count("measure.max_repeats") ? "measure.max_repeats" : "measure.min_repeats";
    r.fail(pos.values.at(at), at,
           "measure.max_repeats (" + std::to_string(c.measure.max_repeats) + ") is below measure.min_repeats (" +
               std::to_string(c.measure.min_repeats) + ")");
  }
}

// The checks that involve several keys, the workload registry or the ONNX file.
void check_whole(const Reader& r, const YAML::Node& root, const RunConfig& c, const Positions& pos) {
  const bool has_name = pos.values.count("workload.name"), has_onnx = pos.values.count("workload.onnx");
  if (!has_name && !has_onnx) {
    bool has_section = pos.keys.count("workload");
    r.fail(key_mark(root, pos, "workload"), "workload",
           has_section ? "needs a name (a registered workload) or an onnx file"
                       : "missing required section (add one with a name or an onnx file)");
  }
  if (has_name && has_onnx)
    r.fail(pos.keys.at("workload.onnx"), "workload.onnx",
           "workload.name is set too; give one of workload.name and workload.onnx");
  if (has_onnx) {
    check_onnx(r, c, pos);
  } else {
    if (pos.keys.count("workload.bind"))
      r.fail(pos.keys.at("workload.bind"), "workload.bind", "only used with workload.onnx (it binds a model's inputs)");
    check_registry_workload(r, c, pos);
  }
  check_budget_and_measure(r, root, c, pos);
}

}  // namespace

RunConfig parse_run_config(const std::string& yaml_text, const std::string& source_name,
                           const std::string& base_directory) {
  Reader r(source_name, base_directory);
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(yaml_text);
  } catch (const YAML::Exception& e) {
    r.fail(e.mark, "", "invalid YAML: " + e.msg);
  }
  if (documents.size() > 1)
    r.fail(documents[1].Mark(), "", "expected one YAML document, found " + std::to_string(documents.size()));
  YAML::Node root = documents.empty() ? YAML::Node() : documents[0];
  if (root.Type() != YAML::NodeType::Map && root.Type() != YAML::NodeType::Null && root.IsDefined())
    r.fail(root.Mark(), "",
           "expected a mapping of keys (" + join(children_of("")) + "), got " + Reader::describe(root));

  RunConfig config;
  Positions pos;
  if (root.Type() == YAML::NodeType::Map) read_section(r, root, "", config, pos);
  check_whole(r, root, config, pos);
  // workload.size: small starts the parameters left out from the workload's small size instead of its defaults.
  if (!config.workload.name.empty() && config.workload.size == "small")
    for (const auto& [name, value] : find_workload(config.workload.name)->small)
      config.workload.params.try_emplace(name, value);
  return config;
}

RunConfig load_run_config(const std::string& path) {
  return parse_run_config(read_user_file<ConfigError>(path), path, std::filesystem::path(path).parent_path().string());
}

std::vector<ConfigKey> run_config_keys() {
  const RunConfig defaults;
  std::vector<ConfigKey> keys;
  for (const KeySpec& s : key_specs()) {
    std::string value = s.show(defaults);
    if (s.path == "workload.name")
      value = "(required unless workload.onnx)";
    else if (s.path == "workload.onnx")
      value = "(required unless workload.name)";
    else if (s.type == ValueType::kString && value.empty())
      value = "\"\"";
    keys.push_back({s.path, type_name(s.type), value});
  }
  return keys;
}

std::string format_run_config(const RunConfig& config) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  auto emit_value = [&](const KeySpec& s) {
    if (s.type == ValueType::kIntegerMap) {
      out << YAML::BeginMap;
      for (const auto& [k, v] : config.workload.params) out << YAML::Key << k << YAML::Value << v;
      out << YAML::EndMap;
    } else if (s.type == ValueType::kIntegerListMap) {
      out << YAML::BeginMap;
      for (const auto& [k, b] : config.workload.bind) {
        out << YAML::Key << k << YAML::Value;
        if (b.scalar) {
          out << b.values.at(0);
          continue;
        }
        out << YAML::Flow << YAML::BeginSeq;
        for (int64_t v : b.values) out << v;
        out << YAML::EndSeq;
      }
      out << YAML::EndMap;
    } else if (s.type == ValueType::kString) {
      out << YAML::DoubleQuoted << s.show(config);
    } else {
      out << s.show(config);
    }
  };
  for (const std::string& top : children_of("")) {
    out << YAML::Key << top << YAML::Value;
    if (const KeySpec* leaf = find_spec(top)) {
      emit_value(*leaf);
      continue;
    }
    out << YAML::BeginMap;
    for (const std::string& child : children_of(top)) {
      // Only the keys of the workload's kind: the others would be empty, which no config may say.
      bool onnx_key = top == "workload" && (child == "onnx" || child == "bind");
      bool registry_key = top == "workload" && (child == "name" || child == "params" || child == "size");
      if ((onnx_key && config.workload.onnx.empty()) || (registry_key && !config.workload.onnx.empty())) continue;
      out << YAML::Key << child << YAML::Value;
      emit_value(*find_spec(top + "." + child));
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::map<std::string, HostTensor> onnx_bound_inputs(const WorkloadConfig& workload) {
  std::map<std::string, HostTensor> bound;
  for (const auto& [name, b] : workload.bind) {
    HostTensor t(DType::kInt64, b.scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(b.values.size())});
    for (size_t i = 0; i < b.values.size(); ++i) t.i64()[i] = b.values[i];
    bound.emplace(name, std::move(t));
  }
  return bound;
}

namespace {

ConfiguredWorkload make_f32_workload(const WorkloadConfig& workload) {
  if (workload.onnx.empty()) {
    std::vector<std::string> weights = find_workload(workload.name)
                                           ? find_workload(workload.name)->weight_names(workload.params)
                                           : std::vector<std::string>{};
    std::sort(weights.begin(), weights.end());
    return {workload.name,
            make_workload(workload.name, workload.params),
            workload_input_ranges(workload.name, workload.params),
            {},
            std::move(weights)};
  }
  ImportedModel model = import_onnx(workload.onnx, onnx_bound_inputs(workload));
  std::vector<std::string> weights;
  for (const auto& [name, value] : model.initializers) weights.push_back(name);  // a std::map: sorted
  return {std::filesystem::path(workload.onnx).stem().string(),
          std::move(model.program),
          {},
          std::move(model.initializers),
          std::move(weights)};
}

}  // namespace

ConfiguredWorkload make_configured_workload(const WorkloadConfig& workload, int64_t bf16_conv_channel_multiple) {
  ConfiguredWorkload f32 = make_f32_workload(workload);
  if (workload.precision == "fp32") return f32;
  if (workload.precision != "bf16")
    throw std::invalid_argument("unknown precision '" + workload.precision + "' (expected fp32 or bf16)");
  return bf16_workload(f32, bf16_products(f32.program, f32.weights, bf16_conv_channel_multiple));
}

ConfiguredWorkload bf16_workload(const ConfiguredWorkload& f32, const Bf16Program& rewritten) {
  TensorMap fixed = f32.fixed_inputs.empty() ? TensorMap{} : bf16_inputs(rewritten, f32.fixed_inputs);
  return {f32.name + "@bf16", rewritten.program, f32.input_ranges, std::move(fixed), f32.weights};
}

}  // namespace ingot
