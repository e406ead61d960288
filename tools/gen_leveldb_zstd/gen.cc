// gen.cc: writes testdata/leveldb_zstd/ fixtures with google/leveldb's own TableBuilder,
// using compression id 2 (kZstdCompression, only in google/leveldb main, not in 1.23).
//
// Build against a google/leveldb main build that has zstd enabled (see
// testdata/leveldb_zstd/README.md for the exact commit and cmake flags), e.g.
//
//   g++ -std=c++17 -O2 -I$LEVELDB_SRC/include gen.cc $LEVELDB_BUILD/libleveldb.a
//       -lzstd -lsnappy -lpthread -o /tmp/gen_leveldb_zstd
//   /tmp/gen_leveldb_zstd testdata/leveldb_zstd
//
// For each table X.ldb it writes X.entries.jsonl ({"key","value"} in file order, as read back
// through leveldb::Table's iterator and compared with what was written) and X.gets.jsonl
// (probes {"key","found","value"?}; found is decided by leveldb::Table's iterator Seek).
// Output is deterministic (fixed PRNG, no timestamps).

#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "leveldb/env.h"
#include "leveldb/filter_policy.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/table.h"
#include "leveldb/table_builder.h"

namespace {

using KV = std::pair<std::string, std::string>;

void Check(const leveldb::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

void Die(const std::string& msg) {
  std::fprintf(stderr, "error: %s\n", msg.c_str());
  std::exit(1);
}

std::string Hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

void WriteLines(const std::string& path, const std::vector<std::string>& rows) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) Die("cannot create " + path);
  for (const auto& r : rows) std::fprintf(f, "%s\n", r.c_str());
  std::fclose(f);
}

const char* kWords[] = {"alpha", "bravo", "charlie", "delta", "echo",
                        "foxtrot", "golf", "hotel", "india", "juliet"};

// ~2000 sorted distinct keys: mostly "key%06d" plus a run of keys "rnd/%05d" whose values are
// random bytes (those blocks do not compress by >= 12.5%, so they are stored raw, type 0).
std::vector<KV> MakeData(std::mt19937_64& rng) {
  std::set<std::string> keys;
  std::vector<KV> out;
  while (keys.size() < 1940) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "key%06u", static_cast<unsigned>(rng() % 1000000));
    std::string k = buf;
    size_t len = rng() % 12;  // separate statements: argument evaluation order is unspecified
    for (size_t j = 0; j < len; j++) k.push_back('a' + static_cast<char>(rng() % 26));
    keys.insert(k);
  }
  for (int i = 0; i < 60; i++) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "rnd/%05d", i);
    keys.insert(buf);
  }
  int i = 0;
  for (const auto& k : keys) {
    std::string v;
    if (k.compare(0, 4, "rnd/") == 0) {
      v.resize(120);
      for (auto& c : v) c = static_cast<char>(rng() & 0xff);
    } else if (i % 97 == 0) {
      v = "";
    } else {
      v = "value " + std::to_string(i);
      int n = 1 + static_cast<int>(rng() % 5);
      for (int j = 0; j < n; j++) {
        v += " ";
        v += kWords[rng() % 10];
      }
    }
    out.emplace_back(k, v);
    i++;
  }
  return out;
}

void WriteTable(const std::string& dir, const std::string& name,
                const std::vector<KV>& data, const leveldb::Options& options,
                std::mt19937_64& rng) {
  leveldb::Env* env = leveldb::Env::Default();
  const std::string path = dir + "/" + name + ".ldb";
  leveldb::WritableFile* wf;
  Check(env->NewWritableFile(path, &wf), "NewWritableFile");
  {
    leveldb::TableBuilder builder(options, wf);
    for (const auto& kv : data) builder.Add(kv.first, kv.second);
    Check(builder.Finish(), "Finish");
  }
  Check(wf->Sync(), "Sync");
  Check(wf->Close(), "Close");
  delete wf;

  // Read back through leveldb::Table (checksums verified).
  uint64_t size;
  Check(env->GetFileSize(path, &size), "GetFileSize");
  leveldb::RandomAccessFile* rf;
  Check(env->NewRandomAccessFile(path, &rf), "NewRandomAccessFile");
  leveldb::Options ropt = options;
  ropt.paranoid_checks = true;
  leveldb::Table* table;
  Check(leveldb::Table::Open(ropt, rf, size, &table), "Table::Open");
  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(ro));
  std::vector<std::string> rows;
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
    if (n >= data.size() || it->key().ToString() != data[n].first ||
        it->value().ToString() != data[n].second) {
      Die(name + ": read-back mismatch at entry " + std::to_string(n));
    }
    rows.push_back("{\"key\": \"" + Hex(data[n].first) + "\", \"value\": \"" +
                   Hex(data[n].second) + "\"}");
  }
  Check(it->status(), "iterate");
  if (n != data.size()) Die(name + ": entry count mismatch");
  WriteLines(dir + "/" + name + ".entries.jsonl", rows);

  // Probes: every 25th key (found) and absent keys / near misses (not found).
  std::set<std::string> present;
  for (const auto& kv : data) present.insert(kv.first);
  std::vector<std::string> probes_absent = {"", std::string("\0", 1), "\xff\xff", "zzz",
                                            "key", "rnd/", "nonexistent"};
  for (int i = 0; i < 40 && !data.empty(); i++) {
    const std::string& k = data[rng() % data.size()].first;
    switch (i % 3) {
      case 0: probes_absent.push_back(k + std::string("\0", 1)); break;
      case 1: probes_absent.push_back(k.substr(0, k.size() - 1)); break;
      case 2: {
        std::string b = k;
        b.back()++;
        probes_absent.push_back(b);
        break;
      }
    }
  }
  std::vector<std::string> gets;
  auto lookup = [&](const std::string& k, std::string* v) {
    it->Seek(k);
    if (it->Valid() && it->key().ToString() == k) {
      *v = it->value().ToString();
      return true;
    }
    Check(it->status(), "seek");
    return false;
  };
  for (size_t i = 0; i < data.size(); i += 25) {
    std::string v;
    if (!lookup(data[i].first, &v) || v != data[i].second) Die(name + ": get mismatch");
    gets.push_back("{\"key\": \"" + Hex(data[i].first) + "\", \"found\": true, \"value\": \"" +
                   Hex(v) + "\"}");
  }
  std::set<std::string> done;
  for (const auto& k : probes_absent) {
    if (present.count(k) || done.count(k)) continue;
    done.insert(k);
    std::string v;
    if (lookup(k, &v)) Die(name + ": absent probe found");
    gets.push_back("{\"key\": \"" + Hex(k) + "\", \"found\": false}");
  }
  WriteLines(dir + "/" + name + ".gets.jsonl", gets);
  it.reset();
  delete table;
  delete rf;
  std::printf("%s: %zu entries, %llu bytes\n", name.c_str(), data.size(),
              static_cast<unsigned long long>(size));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  std::mt19937_64 rng(20240601);
  std::vector<KV> data = MakeData(rng);

  std::unique_ptr<const leveldb::FilterPolicy> bloom(leveldb::NewBloomFilterPolicy(10));
  leveldb::Options options;
  options.compression = leveldb::kZstdCompression;
  options.zstd_compression_level = 1;  // the default
  options.filter_policy = bloom.get();
  options.block_size = 4096;
  options.block_restart_interval = 16;
  WriteTable(dir, "zstd_plain", data, options, rng);

  // The same writer with an empty table (no data block at all in C++).
  WriteTable(dir, "zstd_empty", {}, options, rng);
  return 0;
}
