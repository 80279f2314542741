// The one regular file in a tar archive, as Docker's archive endpoint returns a single path.
// Docker writes plain ustar headers, possibly after a PAX extended header (typeflag x).

export async function firstFileOf(stream) {
  const chunks = []
  for await (const chunk of stream) chunks.push(chunk)
  const tar = Buffer.concat(chunks)
  for (let off = 0; off + 512 <= tar.length; ) {
    if (tar[off] === 0) break // the two zero blocks that end an archive
    const size = parseInt(tar.toString('ascii', off + 124, off + 136).replace(/\0.*$/, '').trim() || '0', 8)
    const type = String.fromCharCode(tar[off + 156])
    if (type === '0' || type === '\0') return tar.subarray(off + 512, off + 512 + size)
    off += 512 + Math.ceil(size / 512) * 512
  }
  throw new Error('no regular file in the archive')
}
