// C++ LevelDB side of scripts/bench_db_open_scan.sh: writes a database directory the way an
// application does (WriteBatch, then compaction), and times DB::Open and a full iteration.
//
//   leveldb_db_bench make DIR N [--shuffled]
//       N entries shaped as the shared peer workload (/work/shared/bench/WORKLOAD.md): key i
//       is "k" + the 15-digit zero-padded 2*i (16 bytes), the value 50 pseudo-random letters
//       [a-zA-Z] then the same 50 again (100 bytes, half compressible; a fixed xorshift
//       stream, not the workload file's bytes). Written in key order (the default; ~35
//       tables at 1M) or, with --shuffled, in a fixed shuffled order (the tables then
//       overlap until the compaction sorts them), WriteBatch of 1000, snappy, bloom 10, then
//       CompactRange(nullptr, nullptr) and close. Prints {"tables": T} (T over all levels).
//   leveldb_db_bench open DIR     {"open_s": ..., "tables": T}  (DB::Open writes to DIR: a
//                                 new log and MANIFEST, CURRENT, LOCK, LOG; give it a copy)
//   leveldb_db_bench scan DIR     {"entries": N, "scan_cold_s": ..., "scan_s": ...}: opens
//                                 (untimed), then two full forward Iterator passes touching
//                                 key and value lengths and the first value byte; cold =
//                                 first pass (empty block cache), warm = second
//   leveldb_db_bench load DIR N [--shuffled]
//                                 {"load_s": ..., "tables": T}: the timed load of issue 17's
//                                 comparison (entries made in memory first, untimed):
//                                 DB::Open (create), the N entries in WriteBatch
//                                 of 1000 (in key order, or with --shuffled in the order of a
//                                 Fisher-Yates shuffle driven by splitmix64, which the Rust side
//                                 computes the same way), CompactRange(nullptr, nullptr) so
//                                 that nothing is left to compact, and close
//   leveldb_db_bench get DIR N    {"hits": H, "found": F, "hit_s_per_op": ..., "miss_s_per_op": ...}:
//                                 opens (untimed), 200,000 hit probes (key i, i = splitmix64(j)
//                                 mod N) and 200,000 miss probes (the odd number 2i+1 between
//                                 two present keys, i = splitmix64(j + 2^32) mod (N - 1)), one
//                                 untimed pass of each, then a timed pass of each (warm)
//
// Options as the shared peer harness uses them: bloom 10, a 64 MiB LRU block cache, snappy,
// 4 KiB blocks, restart interval 16; default ReadOptions (no checksum verification).
//
// Build: g++ -std=c++17 -O2 leveldb_db_bench.cc -lleveldb
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/write_batch.h>

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static leveldb::Options options() {
  leveldb::Options o;
  o.create_if_missing = true;
  o.filter_policy = leveldb::NewBloomFilterPolicy(10);
  o.block_cache = leveldb::NewLRUCache(64 << 20);
  o.compression = leveldb::kSnappyCompression;
  o.block_size = 4096;
  o.block_restart_interval = 16;
  return o;
}

// Key i: "k" + 15-digit 2*i, as the shared workload's.
static void key_of(uint64_t i, char* out) {
  std::snprintf(out, 17, "k%015llu", (unsigned long long)(2 * i));
}

// Value i: 50 letters from a stream seeded by i, then the same 50 again.
static void value_of(uint64_t i, std::string* v) {
  static const char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  v->resize(100);
  uint64_t x = i * 0x9E3779B97F4A7C15ull + 1;
  for (int j = 0; j < 50; j++) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    (*v)[j] = (*v)[50 + j] = kLetters[x % 52];
  }
}

// SplitMix64 (Steele, Lea, Flood 2014): the probe index stream both sides of the benchmark
// compute the same way.
static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static const uint64_t kProbes = 200000;

// The load order of `load --shuffled`: Fisher-Yates, j = splitmix64(i) mod (i + 1), i from
// the top down.
static std::vector<uint64_t> load_order(uint64_t n, bool shuffled) {
  std::vector<uint64_t> order(n);
  for (uint64_t i = 0; i < n; i++) order[i] = i;
  if (shuffled) {
    for (uint64_t i = n; i > 1; i--) {
      uint64_t j = splitmix64(i - 1) % i;
      std::swap(order[i - 1], order[j]);
    }
  }
  return order;
}

static int tables(leveldb::DB* db) {
  int n = 0;
  for (int lvl = 0; lvl < 7; lvl++) {
    std::string v;
    if (db->GetProperty("leveldb.num-files-at-level" + std::to_string(lvl), &v)) n += std::atoi(v.c_str());
  }
  return n;
}

static leveldb::DB* open_db(const char* dir) {
  leveldb::DB* db = nullptr;
  leveldb::Status s = leveldb::DB::Open(options(), dir, &db);
  if (!s.ok()) { std::fprintf(stderr, "open %s: %s\n", dir, s.ToString().c_str()); std::exit(2); }
  return db;
}

int main(int argc, char** argv) {
  if (argc < 3 || (std::strcmp(argv[1], "make") == 0 && argc < 4)) {
    std::fprintf(stderr, "usage: make DIR N [--shuffled] | open DIR | scan DIR | get DIR N\n");
    return 2;
  }
  std::string cmd = argv[1];
  const char* dir = argv[2];
  if (cmd == "make") {
    uint64_t n = std::strtoull(argv[3], nullptr, 10);
    std::vector<uint64_t> order(n);
    for (uint64_t i = 0; i < n; i++) order[i] = i;
    if (argc > 4 && std::strcmp(argv[4], "--shuffled") == 0) {
      std::mt19937_64 rng(42);
      std::shuffle(order.begin(), order.end(), rng);
    }
    leveldb::DB* db = open_db(dir);
    char k[17];
    std::string v;
    for (uint64_t i = 0; i < n; i += 1000) {
      leveldb::WriteBatch b;
      for (uint64_t j = i; j < n && j < i + 1000; j++) {
        key_of(order[j], k);
        value_of(order[j], &v);
        b.Put(leveldb::Slice(k, 16), v);
      }
      leveldb::Status s = db->Write(leveldb::WriteOptions(), &b);
      if (!s.ok()) { std::fprintf(stderr, "write: %s\n", s.ToString().c_str()); return 2; }
    }
    db->CompactRange(nullptr, nullptr);
    std::printf("{\"tables\": %d}\n", tables(db));
    delete db;
    return 0;
  }
  if (cmd == "open") {
    double a = now();
    leveldb::DB* db = open_db(dir);
    double t = now() - a;
    std::printf("{\"peer\": \"leveldb\", \"open_s\": %.9f, \"tables\": %d}\n", t, tables(db));
    delete db;
    return 0;
  }
  if (cmd == "scan") {
    leveldb::DB* db = open_db(dir);
    double times[2];
    uint64_t n = 0, sum = 0;
    for (int pass = 0; pass < 2; pass++) {
      double a = now();
      leveldb::Iterator* it = db->NewIterator(leveldb::ReadOptions());
      n = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        leveldb::Slice k = it->key(), v = it->value();
        sum += k.size() + v.size() + (v.size() ? (unsigned char)v[0] : 0);
        n++;
      }
      if (!it->status().ok()) { std::fprintf(stderr, "scan: %s\n", it->status().ToString().c_str()); return 2; }
      delete it;
      times[pass] = now() - a;
    }
    delete db;
    std::printf("{\"peer\": \"leveldb\", \"entries\": %llu, \"scan_cold_s\": %.9f, \"scan_s\": %.9f, \"check\": %llu}\n",
                (unsigned long long)n, times[0], times[1], (unsigned long long)sum);
    return 0;
  }
  if (cmd == "load" && argc > 3) {
    uint64_t n = std::strtoull(argv[3], nullptr, 10);
    bool shuffled = argc > 4 && std::strcmp(argv[4], "--shuffled") == 0;
    // The entries are made before the clock starts (the application's work, not the
    // database's), in load order.
    std::vector<uint64_t> order = load_order(n, shuffled);
    std::vector<std::pair<std::string, std::string>> entries(n);
    char k[17];
    for (uint64_t i = 0; i < n; i++) {
      key_of(order[i], k);
      entries[i].first.assign(k, 16);
      value_of(order[i], &entries[i].second);
    }
    double a = now();
    leveldb::DB* db = open_db(dir);
    for (uint64_t i = 0; i < n; i += 1000) {
      leveldb::WriteBatch b;
      for (uint64_t j = i; j < n && j < i + 1000; j++) b.Put(entries[j].first, entries[j].second);
      leveldb::Status s = db->Write(leveldb::WriteOptions(), &b);
      if (!s.ok()) { std::fprintf(stderr, "write: %s\n", s.ToString().c_str()); return 2; }
    }
    db->CompactRange(nullptr, nullptr);
    int t = tables(db);
    delete db;
    double secs = now() - a;
    std::printf("{\"peer\": \"leveldb\", \"entries\": %llu, \"load_s\": %.9f, \"tables\": %d}\n",
                (unsigned long long)n, secs, t);
    return 0;
  }
  if (cmd == "get" && argc > 3) {
    uint64_t n = std::strtoull(argv[3], nullptr, 10);
    if (n < 2) return 2;
    std::vector<std::string> hits, misses;
    char k[17];
    for (uint64_t j = 0; j < kProbes; j++) {
      key_of(splitmix64(j) % n, k);
      hits.emplace_back(k, 16);
      std::snprintf(k, 17, "k%015llu", (unsigned long long)(2 * (splitmix64(j + (1ull << 32)) % (n - 1)) + 1));
      misses.emplace_back(k, 16);
    }
    leveldb::DB* db = open_db(dir);
    std::string v;
    uint64_t found = 0, sum = 0, wrong = 0;
    double t_hit = 0, t_miss = 0;
    for (int pass = 0; pass < 2; pass++) {
      found = sum = wrong = 0;
      double a = now();
      for (const std::string& key : hits) {
        leveldb::Status s = db->Get(leveldb::ReadOptions(), key, &v);
        if (s.ok()) {
          found++;
          sum += v.size() + (unsigned char)v[0];
        } else {
          wrong++;
        }
      }
      double b = now();
      for (const std::string& key : misses) {
        if (!db->Get(leveldb::ReadOptions(), key, &v).IsNotFound()) wrong++;
      }
      t_hit = b - a;
      t_miss = now() - b;
    }
    delete db;
    std::printf("{\"peer\": \"leveldb\", \"hits\": %llu, \"found\": %llu, \"wrong\": %llu, \"check\": %llu, "
                "\"hit_s_per_op\": %.12f, \"miss_s_per_op\": %.12f}\n",
                (unsigned long long)kProbes, (unsigned long long)found, (unsigned long long)wrong,
                (unsigned long long)sum, t_hit / kProbes, t_miss / kProbes);
    return wrong == 0 ? 0 : 1;
  }
  return 2;
}
