// The conformance kit's adapter for C++ LevelDB, through its public table and DB API
// (Debian's libleveldb-dev 1.23). Built and run by adapter.sh; protocol in docs/conformance.md.
//
//   adapter capabilities
//   adapter read-table FILE     Table::Open + a table iterator, checksums verified
//   adapter read-db DIR         DB::Open (paranoid checks) + a DB iterator, checksums verified
//   adapter write-table FILE [--block-size N] [--restart-interval N]
//                            [--compression none|snappy] [--bloom-bits N]   (JSONL on stdin)
//
// Reading is done as carefully as LevelDB allows: paranoid_checks (the index block's and the
// logs' checksums) and ReadOptions::verify_checksums (every data block's). Exit 1 on any error
// LevelDB reports, 3 for what this adapter does not do.

#include <leveldb/db.h>
#include <leveldb/env.h>
#include <leveldb/filter_policy.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <leveldb/table_builder.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

namespace {

const int kUnsupported = 3;

void AppendHex(std::string* out, const leveldb::Slice& s) {
  static const char kDigits[] = "0123456789abcdef";
  for (size_t i = 0; i < s.size(); i++) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out->push_back(kDigits[c >> 4]);
    out->push_back(kDigits[c & 15]);
  }
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The hex string of field `name` in a JSON line written by the kit: {"key": "..", "value": ".."}.
bool Field(const std::string& line, const char* name, std::string* out) {
  std::string quoted = std::string("\"") + name + "\"";
  size_t at = line.find(quoted);
  if (at == std::string::npos) return false;
  at = line.find(':', at + quoted.size());
  if (at == std::string::npos) return false;
  at = line.find('"', at);
  if (at == std::string::npos) return false;
  size_t end = line.find('"', at + 1);
  if (end == std::string::npos || (end - at - 1) % 2 != 0) return false;
  out->clear();
  for (size_t i = at + 1; i < end; i += 2) {
    int hi = HexDigit(line[i]), lo = HexDigit(line[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

// Prints every entry of `it` as a JSONL row; 0, or 1 if the iterator ends on an error.
int PrintAll(leveldb::Iterator* it, const char* what) {
  std::string line;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    line.assign("{\"key\":\"");
    AppendHex(&line, it->key());
    line.append("\",\"value\":\"");
    AppendHex(&line, it->value());
    line.append("\"}\n");
    fwrite(line.data(), 1, line.size(), stdout);
  }
  leveldb::Status s = it->status();
  if (!s.ok()) {
    std::cerr << what << ": " << s.ToString() << std::endl;
    return 1;
  }
  return 0;
}

int ReadTable(const std::string& path) {
  leveldb::Env* env = leveldb::Env::Default();
  uint64_t size = 0;
  leveldb::Status s = env->GetFileSize(path, &size);
  leveldb::RandomAccessFile* file = nullptr;
  if (s.ok()) s = env->NewRandomAccessFile(path, &file);
  std::unique_ptr<leveldb::RandomAccessFile> file_owner(file);
  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(10));
  leveldb::Options options;
  options.paranoid_checks = true;
  options.filter_policy = policy.get();
  leveldb::Table* table = nullptr;
  if (s.ok()) s = leveldb::Table::Open(options, file, size, &table);
  if (!s.ok()) {
    std::cerr << path << ": " << s.ToString() << std::endl;
    return 1;
  }
  std::unique_ptr<leveldb::Table> table_owner(table);
  leveldb::ReadOptions read;
  read.verify_checksums = true;
  read.fill_cache = false;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read));
  return PrintAll(it.get(), path.c_str());
}

int ReadDb(const std::string& dir) {
  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(10));
  leveldb::Options options;
  options.create_if_missing = false;
  options.paranoid_checks = true;
  options.filter_policy = policy.get();
  leveldb::DB* db = nullptr;
  leveldb::Status s = leveldb::DB::Open(options, dir, &db);
  if (!s.ok()) {
    std::cerr << dir << ": " << s.ToString() << std::endl;
    return 1;
  }
  std::unique_ptr<leveldb::DB> db_owner(db);
  leveldb::ReadOptions read;
  read.verify_checksums = true;
  read.fill_cache = false;
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator(read));
  return PrintAll(it.get(), dir.c_str());
}

int WriteTable(const std::string& path, int argc, char** argv) {
  leveldb::Options options;
  options.compression = leveldb::kSnappyCompression;
  std::unique_ptr<const leveldb::FilterPolicy> policy;
  for (int i = 0; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--block-size") {
      options.block_size = std::strtoul(value.c_str(), nullptr, 10);
    } else if (flag == "--restart-interval") {
      options.block_restart_interval = std::atoi(value.c_str());
    } else if (flag == "--compression" && value == "none") {
      options.compression = leveldb::kNoCompression;
    } else if (flag == "--compression" && value == "snappy") {
      options.compression = leveldb::kSnappyCompression;
    } else if (flag == "--bloom-bits") {
      policy.reset(leveldb::NewBloomFilterPolicy(std::atoi(value.c_str())));
      options.filter_policy = policy.get();
    } else {
      std::cerr << "write-table: unsupported " << flag << " " << value << std::endl;
      return kUnsupported;
    }
  }
  leveldb::Env* env = leveldb::Env::Default();
  std::string tmp = path + ".tmp";
  leveldb::WritableFile* file = nullptr;
  leveldb::Status s = env->NewWritableFile(tmp, &file);
  if (!s.ok()) {
    std::cerr << tmp << ": " << s.ToString() << std::endl;
    return 1;
  }
  std::unique_ptr<leveldb::WritableFile> file_owner(file);
  leveldb::TableBuilder builder(options, file);
  std::string line, key, value;
  size_t n = 0;
  while (std::getline(std::cin, line)) {
    n++;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!Field(line, "key", &key) || !Field(line, "value", &value)) {
      std::cerr << "stdin line " << n << ": not a {\"key\", \"value\"} row" << std::endl;
      builder.Abandon();
      return 1;
    }
    builder.Add(key, value);
  }
  s = builder.Finish();
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (s.ok()) s = env->RenameFile(tmp, path);
  if (!s.ok()) {
    std::cerr << path << ": " << s.ToString() << std::endl;
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  static char buffer[1 << 16];
  setvbuf(stdout, buffer, _IOFBF, sizeof(buffer));
  std::string verb = argc > 1 ? argv[1] : "";
  int code = kUnsupported;
  if (verb == "capabilities") {
    printf("{\"name\": \"LevelDB %d.%d (C++, libleveldb)\", \"verbs\": [\"read-table\", \"read-db\", "
           "\"write-table\"], \"compressions\": [\"none\", \"snappy\"], "
           "\"comparators\": [\"leveldb.BytewiseComparator\"]}\n",
           leveldb::kMajorVersion, leveldb::kMinorVersion);
    code = 0;
  } else if (verb == "read-table" && argc == 3) {
    code = ReadTable(argv[2]);
  } else if (verb == "read-db" && argc == 3) {
    code = ReadDb(argv[2]);
  } else if (verb == "write-table" && argc >= 3) {
    code = WriteTable(argv[2], argc - 3, argv + 3);
  } else {
    std::cerr << "unsupported: " << verb << std::endl;
  }
  fflush(stdout);
  return code;
}
