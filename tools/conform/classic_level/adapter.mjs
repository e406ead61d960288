// The conformance kit's adapter for classic-level (npm; its prebuilt binding bundles C++
// LevelDB 1.20), read-db only (it opens databases, not single tables):
//
//   (cd tools/conform/classic_level && npm install)       once
//   sst conform --impl 'node tools/conform/classic_level/adapter.mjs'
//
// classic-level exposes neither paranoid_checks nor verify_checksums: LevelDB's defaults
// (both off) are what its users get. Exit 1 on any error it raises, 3 for other verbs.
import { ClassicLevel } from 'classic-level'
import { createRequire } from 'node:module'

const [verb, dir, ...rest] = process.argv.slice(2)

async function readDb (path) {
  const db = new ClassicLevel(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' })
  try {
    await db.open({ createIfMissing: false })
    const out = []
    let size = 0
    for await (const [k, v] of db.iterator()) {
      out.push(`{"key":"${k.toString('hex')}","value":"${v.toString('hex')}"}\n`)
      size += 1
      if (size === 1000) {
        process.stdout.write(out.join(''))
        out.length = 0
        size = 0
      }
    }
    process.stdout.write(out.join(''))
    await db.close()
    return 0
  } catch (e) {
    process.stderr.write(`${path}: ${e.code || ''} ${e.message}${e.cause ? ': ' + e.cause.message : ''}\n`)
    return 1
  }
}

let code = 3
if (verb === 'capabilities') {
  const version = createRequire(import.meta.url)('classic-level/package.json').version
  process.stdout.write(JSON.stringify({
    name: `classic-level ${version} (LevelDB 1.20, node ${process.version})`,
    verbs: ['read-db'],
    compressions: ['none', 'snappy']
  }) + '\n')
  code = 0
} else if (verb === 'read-db' && dir !== undefined && rest.length === 0) {
  code = await readDb(dir)
} else {
  process.stderr.write(`unsupported: ${verb}\n`)
}
process.stdout.write('', () => process.exit(code))
