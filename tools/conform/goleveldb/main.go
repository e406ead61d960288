// Command goleveldb is the conformance kit's adapter for goleveldb (github.com/syndtr/goleveldb,
// Debian's golang-github-syndtr-goleveldb-dev), built and run by adapter.sh; the protocol is in
// docs/conformance.md.
//
//	adapter capabilities
//	adapter read-table FILE     table.NewReader + its iterator, every strict check on
//	adapter read-db DIR         leveldb.OpenFile (ErrorIfMissing, every strict check) + DB iterator
//	adapter write-table FILE [--block-size N] [--restart-interval N]
//	                         [--compression none|snappy] [--bloom-bits N]   (JSONL on stdin)
//
// Reads are done with every strict check (opt.StrictAll), or with goleveldb's default
// strictness when GOLEVELDB_STRICT=default (the name in capabilities says which).
// Exit 1 on any error goleveldb reports, 3 for what this adapter does not do.
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/iterator"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/storage"
	"github.com/syndtr/goleveldb/leveldb/table"
)

// The Debian package this is built against (goleveldb has no version constant).
const goleveldbVersion = "0.0~git20200815.5c35d60"

const exitUnsupported = 3

// strict is the strictness reads use, and its name.
func strict() (opt.Strict, string) {
	if os.Getenv("GOLEVELDB_STRICT") == "default" {
		return opt.DefaultStrict, "default strictness"
	}
	return opt.StrictAll, "StrictAll"
}

func fail(code int, format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(code)
}

func printAll(it iterator.Iterator, what string) {
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	for it.Next() {
		fmt.Fprintf(w, "{\"key\":\"%s\",\"value\":\"%s\"}\n", hex.EncodeToString(it.Key()), hex.EncodeToString(it.Value()))
	}
	w.Flush()
	if err := it.Error(); err != nil {
		fail(1, "%s: %v", what, err)
	}
	it.Release()
}

func readTable(path string) {
	f, err := os.Open(path)
	if err != nil {
		fail(1, "%v", err)
	}
	st, err := f.Stat()
	if err != nil {
		fail(1, "%v", err)
	}
	s, _ := strict()
	o := &opt.Options{Filter: filter.NewBloomFilter(10), Strict: s}
	r, err := table.NewReader(f, st.Size(), storage.FileDesc{Type: storage.TypeTable, Num: 1}, nil, nil, o)
	if err != nil {
		fail(1, "%s: %v", path, err)
	}
	printAll(r.NewIterator(nil, &opt.ReadOptions{Strict: s | opt.StrictOverride}), path)
}

func readDb(dir string) {
	s, _ := strict()
	o := &opt.Options{ErrorIfMissing: true, Strict: s, Filter: filter.NewBloomFilter(10)}
	db, err := leveldb.OpenFile(dir, o)
	if err != nil {
		fail(1, "%s: %v", dir, err)
	}
	printAll(db.NewIterator(nil, &opt.ReadOptions{Strict: s | opt.StrictOverride}), dir)
	if err := db.Close(); err != nil {
		fail(1, "%s: %v", dir, err)
	}
}

func writeTable(path string, args []string) {
	o := &opt.Options{Compression: opt.SnappyCompression}
	for i := 0; i+1 < len(args); i += 2 {
		n, _ := strconv.Atoi(args[i+1])
		switch {
		case args[i] == "--block-size":
			o.BlockSize = n
		case args[i] == "--restart-interval":
			o.BlockRestartInterval = n
		case args[i] == "--compression" && args[i+1] == "none":
			o.Compression = opt.NoCompression
		case args[i] == "--compression" && args[i+1] == "snappy":
			o.Compression = opt.SnappyCompression
		case args[i] == "--bloom-bits":
			o.Filter = filter.NewBloomFilter(n)
		default:
			fail(exitUnsupported, "write-table: unsupported %s %s", args[i], args[i+1])
		}
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		fail(1, "%v", err)
	}
	w := table.NewWriter(f, o)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<30)
	line := 0
	for in.Scan() {
		line++
		var row struct{ Key, Value string }
		if len(in.Bytes()) == 0 {
			continue
		}
		if err := json.Unmarshal(in.Bytes(), &row); err != nil {
			fail(1, "stdin line %d: %v", line, err)
		}
		k, err1 := hex.DecodeString(row.Key)
		v, err2 := hex.DecodeString(row.Value)
		if err1 != nil || err2 != nil {
			fail(1, "stdin line %d: not hex", line)
		}
		if err := w.Append(k, v); err != nil {
			fail(1, "%s: %v", path, err)
		}
	}
	if err := in.Err(); err != nil {
		fail(1, "stdin: %v", err)
	}
	if err := w.Close(); err != nil {
		fail(1, "%s: %v", path, err)
	}
	if err := f.Sync(); err != nil {
		fail(1, "%v", err)
	}
	if err := f.Close(); err != nil {
		fail(1, "%v", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		fail(1, "%v", err)
	}
}

func main() {
	verb := ""
	if len(os.Args) > 1 {
		verb = os.Args[1]
	}
	switch {
	case verb == "capabilities":
		_, mode := strict()
		fmt.Printf("{\"name\": \"goleveldb %s (%s, %s)\", \"verbs\": [\"read-table\", \"read-db\", \"write-table\"], \"compressions\": [\"none\", \"snappy\"]}\n", goleveldbVersion, runtime.Version(), mode)
	case verb == "read-table" && len(os.Args) == 3:
		readTable(os.Args[2])
	case verb == "read-db" && len(os.Args) == 3:
		readDb(os.Args[2])
	case verb == "write-table" && len(os.Args) >= 3:
		writeTable(os.Args[2], os.Args[3:])
	default:
		fail(exitUnsupported, "unsupported: %q", verb)
	}
}
