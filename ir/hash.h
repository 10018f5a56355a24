// The stable 64-bit hash ingot keys things by (programs, schedules, expressions, compiled sources, tuning
// candidates) and its printed form. Stable across processes, machines and releases: databases and kernel
// caches store these values, so changing either function orphans every stored key.
#pragma once

#include <cstdint>
#include <string>

namespace ingot {

// FNV-1a, 64 bits, of the bytes of text, from the offset basis 1469598103934665603: the published basis
// (14695981039346656037) short of its last digit. Kept so, as every stored key depends on it; so it does not give
// the published test vectors (fnv1a64("") is 0x14650fb0739d0383).
uint64_t fnv1a64(const std::string& text);

// 16 lowercase hex digits, e.g. "00c277fc62fc5e74": the form of every hash in file names, error messages and the
// tuning database.
std::string hash_hex(uint64_t hash);

}  // namespace ingot
