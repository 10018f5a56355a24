// Import time of the six paper models exported from PyTorch to ONNX (issue 4's bench): import_onnx's file read,
// parse, ONNX shape inference and mapping of every node to TEs. The models come from
// scripts/peers/export_onnx.py, in the directory INGOT_ONNX_MODELS_DIR names; without them each case is skipped.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "workloads/onnx_import.h"

namespace ingot {
namespace {

// The model file, or "" with `why` set when the exports are not there.
std::string exported_model_path(const std::string& model, std::string* why) {
  const char* dir = std::getenv("INGOT_ONNX_MODELS_DIR");
  if (!dir || !*dir) {
    *why = "INGOT_ONNX_MODELS_DIR is not set: run scripts/peers/export_onnx.py DIR and set it to DIR";
    return "";
  }
  std::filesystem::path path = std::filesystem::path(dir) / (model + ".onnx");
  if (!std::filesystem::exists(path)) {
    *why = path.string() + " is missing: run scripts/peers/export_onnx.py " + dir + " --models " + model;
    return "";
  }
  return path.string();
}

void BM_ImportOnnx(benchmark::State& state, const std::string& model) {
  std::string why;
  const std::string path = exported_model_path(model, &why);
  if (path.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  size_t computes = 0, placeholders = 0;
  for (auto _ : state) {
    ImportedModel imported = import_onnx(path);
    computes = imported.program.computes().size();
    placeholders = imported.program.placeholders().size();
    benchmark::DoNotOptimize(imported);
  }
  state.counters["file_MB"] = double(std::filesystem::file_size(path)) / 1e6;
  state.counters["TEs"] = double(computes);
  state.counters["placeholders"] = double(placeholders);
}

BENCHMARK_CAPTURE(BM_ImportOnnx, resnext, std::string("resnext"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, efficientnet, std::string("efficientnet"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, swin, std::string("swin"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, bert, std::string("bert"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, lstm, std::string("lstm"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, mmoe, std::string("mmoe"))->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ingot
