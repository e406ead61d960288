// C++ LevelDB side of scripts/bench_db_open_scan.sh: writes a database directory the way an
// application does (WriteBatch, then compaction), and times DB::Open and a full iteration.
//
//   leveldb_db_bench make DIR N   N entries (16-byte keys in a shuffled order, 100-byte
//                                 values), WriteBatch of 1000, snappy, bloom 10, then
//                                 CompactRange over everything
//   leveldb_db_bench open DIR     {"open_s": ...}  (DB::Open writes to DIR: give it a copy)
//   leveldb_db_bench scan DIR     {"entries": N, "scan_cold_s": ..., "scan_s": ...}
//
// Options as the shared peer harness uses them: bloom 10, a 64 MiB block cache, snappy.
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
  return o;
}

static void key_of(uint64_t i, char* out) { std::snprintf(out, 17, "k%015llu", (unsigned long long)i); }

static void value_of(uint64_t i, std::string* v) {
  v->resize(100);
  uint64_t x = i * 0x9E3779B97F4A7C15ull + 1;
  for (int j = 0; j < 100; j++) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    (*v)[j] = 'a' + (x % 16);  // compressible, as text values are
  }
}

static leveldb::DB* open_db(const char* dir) {
  leveldb::DB* db = nullptr;
  leveldb::Status s = leveldb::DB::Open(options(), dir, &db);
  if (!s.ok()) { std::fprintf(stderr, "open %s: %s\n", dir, s.ToString().c_str()); std::exit(2); }
  return db;
}

int main(int argc, char** argv) {
  if (argc < 3) { std::fprintf(stderr, "usage: make DIR N | open DIR | scan DIR\n"); return 2; }
  std::string cmd = argv[1];
  const char* dir = argv[2];
  if (cmd == "make") {
    uint64_t n = std::strtoull(argv[3], nullptr, 10);
    std::vector<uint64_t> order(n);
    for (uint64_t i = 0; i < n; i++) order[i] = i;
    std::mt19937_64 rng(42);
    std::shuffle(order.begin(), order.end(), rng);
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
    delete db;
    return 0;
  }
  if (cmd == "open") {
    double a = now();
    leveldb::DB* db = open_db(dir);
    double t = now() - a;
    delete db;
    std::printf("{\"peer\": \"leveldb\", \"open_s\": %.9f}\n", t);
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
      delete it;
      times[pass] = now() - a;
    }
    delete db;
    std::printf("{\"peer\": \"leveldb\", \"entries\": %llu, \"scan_cold_s\": %.9f, \"scan_s\": %.9f, \"check\": %llu}\n",
                (unsigned long long)n, times[0], times[1], (unsigned long long)sum);
    return 0;
  }
  return 2;
}
