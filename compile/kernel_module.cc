#include "compile/kernel_module.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "codegen/cpp_printer.h"

namespace ingot {

namespace {

// The OpenMP runtime (libgomp) that a kernel library pulls in keeps its worker threads alive after a parallel
// region; if dlclose of the last kernel unloaded the runtime, those threads would run unmapped code. So the
// runtime is marked never-unload the first time a kernel brings it in.
void keep_openmp_runtime_loaded(void* handle) {
  void* sym = ::dlsym(handle, "omp_get_max_threads");
  Dl_info info;
  if (!sym || !::dladdr(sym, &info) || !info.dli_fname) return;
  if (void* runtime = ::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) ::dlclose(runtime);
}

}  // namespace

void KernelModule::FreeWorkspace::operator()(void* p) const { std::free(p); }

KernelModule::KernelModule(const std::string& library_path) { load(library_path); }

KernelModule::KernelModule(const std::string& library_path, const LoopFunction& expected) {
  load(library_path);
  auto mismatch = [&](const std::string& what, int64_t have, int64_t want) {
    if (have == want) return;
    std::string message = "kernel library '" + path_ + "' has " + std::to_string(have) + " " + what +
                          " but function '" + expected.name + "' needs " + std::to_string(want);
    unload();
    throw std::runtime_error(message);
  };
  mismatch("inputs", num_inputs_, int64_t(expected.inputs.size()));
  mismatch("outputs", num_outputs_, int64_t(expected.outputs.size()));
  mismatch("workspace bytes", workspace_bytes_, cpp_workspace_layout(expected).total_bytes);
  for (const auto* list : {&expected.inputs, &expected.outputs})
    for (const Buffer& b : *list) signature_.push_back({b->name, b->dtype, b->num_elements()});
}

KernelModule::~KernelModule() { unload(); }

KernelModule::KernelModule(KernelModule&& other) noexcept { *this = std::move(other); }

KernelModule& KernelModule::operator=(KernelModule&& other) noexcept {
  if (this == &other) return *this;
  unload();
  path_ = std::move(other.path_);
  handle_ = other.handle_;
  run_ = other.run_;
  num_inputs_ = other.num_inputs_;
  num_outputs_ = other.num_outputs_;
  workspace_bytes_ = other.workspace_bytes_;
  workspace_ = std::move(other.workspace_);
  signature_ = std::move(other.signature_);
  other.handle_ = nullptr;
  other.run_ = nullptr;
  return *this;
}

void KernelModule::unload() {
  workspace_.reset();
  if (handle_) ::dlclose(handle_);
  handle_ = nullptr;
  run_ = nullptr;
}

std::vector<double> KernelModule::read_profile_marks() {
  auto capacity = reinterpret_cast<int (*)(void)>(::dlsym(handle_, "ingot_profile_capacity"));
  auto read = reinterpret_cast<int (*)(double*)>(::dlsym(handle_, "ingot_profile_read"));
  if (!capacity || !read)
    throw std::runtime_error("kernel library '" + path_ + "' has no profile marks (it was printed without them)");
  std::vector<double> marks(size_t(std::max(capacity(), 0)));
  marks.resize(size_t(read(marks.data())));
  return marks;
}

void* KernelModule::symbol(const char* name) {
  ::dlerror();
  void* p = ::dlsym(handle_, name);
  if (!p) {
    const char* err = ::dlerror();
    std::string message = "kernel library '" + path_ + "' lacks the symbol '" + name + "'" +
                          (err ? std::string(" (") + err + ")" : std::string());
    unload();
    throw std::runtime_error(message);
  }
  return p;
}

void KernelModule::load(const std::string& library_path) {
  path_ = library_path;
  ::dlerror();
  handle_ = ::dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* err = ::dlerror();
    throw std::runtime_error("cannot load kernel library '" + library_path + "': " + (err ? err : "unknown error"));
  }
  keep_openmp_runtime_loaded(handle_);
  auto abi_version = reinterpret_cast<int (*)()>(symbol("ingot_abi_version"));
  auto num_inputs = reinterpret_cast<int (*)()>(symbol("ingot_num_inputs"));
  auto num_outputs = reinterpret_cast<int (*)()>(symbol("ingot_num_outputs"));
  auto workspace_bytes = reinterpret_cast<int64_t (*)()>(symbol("ingot_workspace_bytes"));
  run_ = reinterpret_cast<void (*)(void* const*, void*)>(symbol("ingot_run"));
  if (int v = abi_version(); v != kCppKernelAbiVersion) {
    unload();
    throw std::runtime_error("kernel library '" + library_path + "' has ABI version " + std::to_string(v) +
                             "; this ingot loads version " + std::to_string(kCppKernelAbiVersion));
  }
  num_inputs_ = num_inputs();
  num_outputs_ = num_outputs();
  workspace_bytes_ = workspace_bytes();
  if (num_inputs_ < 0 || num_outputs_ < 0 || workspace_bytes_ < 0) {
    unload();
    throw std::runtime_error("kernel library '" + library_path + "' reports negative argument or workspace sizes");
  }
  if (workspace_bytes_ > 0) {
    size_t bytes = (size_t(workspace_bytes_) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    if (!p) {
      unload();
      throw std::runtime_error("cannot allocate " + std::to_string(bytes) + " workspace bytes for '" + library_path +
                               "'");
    }
    std::memset(p, 0, bytes);  // deterministic contents for a kernel that (wrongly) reads before writing
    workspace_.reset(p);
  }
}

void KernelModule::run(const std::vector<void*>& args) {
  if (!run_) throw std::logic_error("run() on a moved-from KernelModule");
  if (args.size() != size_t(num_inputs_ + num_outputs_))
    throw std::invalid_argument("kernel library '" + path_ + "' takes " + std::to_string(num_inputs_) + " inputs and " +
                                std::to_string(num_outputs_) + " outputs, but run() got " +
                                std::to_string(args.size()) + " arguments");
  run_(args.data(), workspace_.get());
}

void KernelModule::run(const std::vector<const HostTensor*>& inputs, const std::vector<HostTensor*>& outputs) {
  if (inputs.size() != size_t(num_inputs_) || outputs.size() != size_t(num_outputs_))
    throw std::invalid_argument("kernel library '" + path_ + "' takes " + std::to_string(num_inputs_) + " inputs and " +
                                std::to_string(num_outputs_) + " outputs, but run() got " +
                                std::to_string(inputs.size()) + " and " + std::to_string(outputs.size()));
  std::vector<void*> args;
  for (size_t i = 0; i < inputs.size() + outputs.size(); ++i) {
    const HostTensor* t = i < inputs.size() ? inputs[i] : outputs[i - inputs.size()];
    if (!t) throw std::invalid_argument("run() argument " + std::to_string(i) + " is null");
    // The kernel only reads its inputs; the C ABI has one pointer type for all arguments.
    args.push_back(const_cast<void*>(t->data()));
    if (i < signature_.size() && (t->dtype() != signature_[i].dtype || t->num_elements() != signature_[i].num_elements))
      throw std::invalid_argument("buffer '" + signature_[i].name + "' needs " +
                                  std::to_string(signature_[i].num_elements) + " " + dtype_name(signature_[i].dtype) +
                                  " elements, but run() got " + std::to_string(t->num_elements()) + " " +
                                  dtype_name(t->dtype()));
  }
  run(args);
}

bool KernelModule::set_num_threads(int n) {
  if (n < 1) throw std::invalid_argument("set_num_threads needs at least one thread, not " + std::to_string(n));
  if (!handle_) throw std::logic_error("set_num_threads() on a moved-from KernelModule");
  // dlsym on the library's handle also searches its dependencies, so this finds the OpenMP runtime that
  // ingot_run's parallel regions use.
  auto set = reinterpret_cast<void (*)(int)>(::dlsym(handle_, "omp_set_num_threads"));
  if (!set) return false;
  set(n);
  return true;
}

std::vector<const HostTensor*> pack_inputs(const LoopFunction& f, const std::vector<const HostTensor*>& inputs,
                                           std::vector<HostTensor>& packed) {
  if (inputs.size() != f.inputs.size())
    throw std::invalid_argument("function '" + f.name + "' takes " + std::to_string(f.inputs.size()) + " inputs, not " +
                                std::to_string(inputs.size()));
  packed.clear();
  packed.reserve(f.packed_inputs.size());  // the pointers below stay valid
  std::vector<const HostTensor*> out = inputs;
  for (const PackedLayout& layout : f.packed_inputs)
    for (size_t n = 0; n < f.inputs.size(); ++n)
      if (f.inputs[n]->name == layout.tensor) {
        packed.push_back(layout.pack(*inputs[n]));
        out[n] = &packed.back();
      }
  return out;
}

}  // namespace ingot
