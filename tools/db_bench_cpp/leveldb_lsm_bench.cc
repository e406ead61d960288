// C++ LevelDB side of scripts/bench_mini_lsm.sh: db_bench's write and read workloads, run
// the way `mini_lsm DIR bench --benchmarks ... --fresh --json` runs them on the Rust engine
// (examples/mini_lsm), with the same keys, values and order.
//
//   leveldb_lsm_bench DIR NUM LIST     LIST: comma-separated, in order, of
//     fillseq     fresh database, keys 0..NUM in order
//     fillrandom  fresh database, key splitmix64(2^32 + i) mod NUM, i = 0..NUM
//     overwrite   the same database, key splitmix64(2 * 2^32 + i) mod NUM
//     readrandom  DB::Get of key splitmix64(3 * 2^32 + i) mod NUM
//     readseq     one forward Iterator pass over the database
//   Keys are the number as 16 decimal digits (db_bench's "%016d"); value i is 50 letters from
//   a xorshift stream seeded by i, twice (100 bytes that compress to about half, db_bench's
//   ratio 0.5). One Put per write (a WriteBatch of one, reused as db_bench does), sync
//   off. Each benchmark prints one
//   JSON line: {"bench": ..., "micros_per_op": ..., "cpu_s": ..., "ops": ..., "found": ...,
//   "tables": [per level]} (cpu_s: CPU seconds of all threads during the benchmark).
//
// Options: LevelDB's defaults (4 MiB write buffer, 2 MiB tables, 8 MiB block cache, snappy,
// 4 KiB blocks) and a bloom filter of 10 bits per key, as the Rust engine's defaults.
//
// Build: g++ -std=c++17 -O2 leveldb_lsm_bench.cc -lleveldb
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <sys/resource.h>

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/write_batch.h>

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU seconds of the process so far, all threads (user + system).
static double cpu() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static void key_of(uint64_t k, char* out) { std::snprintf(out, 21, "%016llu", (unsigned long long)k); }

static void value_of(uint64_t i, std::string* v) {
  static const char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  v->resize(100);
  uint64_t x = (i * 0x9E3779B97F4A7C15ull) | 1;
  for (int j = 0; j < 50; j++) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    (*v)[j] = (*v)[50 + j] = kLetters[x % 52];
  }
}

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s DIR NUM fillseq,fillrandom,overwrite,readrandom,readseq\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  uint64_t num = std::strtoull(argv[2], nullptr, 10);
  std::string list = argv[3];
  leveldb::Options o;
  o.create_if_missing = true;
  o.filter_policy = leveldb::NewBloomFilterPolicy(10);
  o.block_cache = leveldb::NewLRUCache(8 << 20);
  leveldb::DB* db = nullptr;
  auto open = [&](bool fresh) {
    delete db;
    db = nullptr;
    if (fresh) leveldb::DestroyDB(dir, o);
    leveldb::Status s = leveldb::DB::Open(o, dir, &db);
    if (!s.ok()) { std::fprintf(stderr, "open: %s\n", s.ToString().c_str()); std::exit(2); }
  };
  open(false);
  char key[21];
  std::string value;
  leveldb::WriteOptions wo;
  leveldb::WriteBatch batch;
  leveldb::ReadOptions ro;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(pos, comma - pos);
    pos = comma + 1;
    bool fill = name == "fillseq" || name == "fillrandom";
    if (fill) open(true);
    uint64_t seed = name == "fillrandom" ? (1ull << 32) : name == "overwrite" ? (2ull << 32) : (3ull << 32);
    long long found = -1;
    uint64_t ops = num;
    double start = now();
    double cpu_start = cpu();
    if (fill || name == "overwrite") {
      for (uint64_t i = 0; i < num; i++) {
        key_of(name == "fillseq" ? i : splitmix64(seed + i) % num, key);
        value_of(i, &value);
        batch.Clear();  // as db_bench: one batch, cleared and refilled per write
        batch.Put(leveldb::Slice(key, 16), value);
        leveldb::Status s = db->Write(wo, &batch);
        if (!s.ok()) { std::fprintf(stderr, "write: %s\n", s.ToString().c_str()); return 2; }
      }
    } else if (name == "readrandom") {
      found = 0;
      std::string v;
      for (uint64_t i = 0; i < num; i++) {
        key_of(splitmix64(seed + i) % num, key);
        if (db->Get(ro, leveldb::Slice(key, 16), &v).ok()) found++;
      }
    } else if (name == "readseq") {
      leveldb::Iterator* it = db->NewIterator(ro);
      found = 0;
      size_t bytes = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        bytes += it->key().size() + it->value().size();
        found++;
      }
      if (!it->status().ok()) { std::fprintf(stderr, "scan: %s\n", it->status().ToString().c_str()); return 2; }
      delete it;
      ops = found > 0 ? found : 1;
      if (bytes == 1) std::fprintf(stderr, " ");
    } else {
      std::fprintf(stderr, "unknown benchmark %s\n", name.c_str());
      return 2;
    }
    double us = (now() - start) * 1e6 / ops;
    double cpu_s = cpu() - cpu_start;
    std::string tables;
    for (int l = 0; l < 7; l++) {
      std::string n;
      db->GetProperty("leveldb.num-files-at-level" + std::to_string(l), &n);
      tables += (l ? ", " : "") + n;
    }
    std::printf("{\"bench\": \"%s\", \"micros_per_op\": %.4f, \"cpu_s\": %.2f, \"ops\": %llu, \"found\": %s, \"tables\": [%s]}\n",
                name.c_str(), us, cpu_s, (unsigned long long)ops,
                found < 0 ? "null" : std::to_string(found).c_str(), tables.c_str());
    std::fflush(stdout);
  }
  delete db;
  delete o.block_cache;
  delete o.filter_policy;
  return 0;
}
