#!/usr/bin/env python3
"""Turn a tar stream into git objects without unpacking it to disk.

Reads an uncompressed tar on stdin whose members all lie under TOPDIR/,
writes a `git fast-import` stream of one blob per regular file and
symlink to stdout, and writes to INDEX_INFO the NUL-terminated
`git update-index -z --index-info` lines ("<mode> <sha1>\\t<path>", path
relative to TOPDIR) that make the index `git add -f -A` would make of the
unpacked tree: mode 100755 when the owner may execute the file, else
100644; 120000 for a symlink, whose blob is the link target; directories
are not recorded. The caller then runs write-tree and commit-tree, so the
commit id is the same as that of `git add` + `git commit` in the unpacked
tree (scripts/fetch.sh; the stock commit id is pinned in patches/).

usage: xz -dc TARBALL | tar-to-git.py TOPDIR INDEX_INFO | git fast-import
Exits 1 on a member outside TOPDIR/ or of another type (device, fifo).
"""
import hashlib
import sys
import tarfile


def main():
    if len(sys.argv) != 3:
        print("usage: tar-to-git.py TOPDIR INDEX_INFO", file=sys.stderr)
        return 1
    top, index_info = sys.argv[1].rstrip("/") + "/", sys.argv[2]
    out = sys.stdout.buffer
    seen = {}  # path -> (mode, sha1), for hard links to an earlier member
    nfiles = 0
    with open(index_info, "wb") as idx, \
            tarfile.open(fileobj=sys.stdin.buffer, mode="r|") as tar:
        for m in tar:
            name = m.name
            if name.startswith("./"):
                name = name[2:]
            if name.rstrip("/") + "/" == top and m.isdir():
                continue
            if not name.startswith(top):
                print("tar-to-git: %s is not under %s" % (m.name, top), file=sys.stderr)
                return 1
            path = name[len(top):]
            if m.isdir():
                continue
            if m.islnk():
                target = m.linkname[2:] if m.linkname.startswith("./") else m.linkname
                if target[len(top):] not in seen:
                    print("tar-to-git: hard link %s to %s, not seen before" % (m.name, m.linkname),
                          file=sys.stderr)
                    return 1
                mode, sha = seen[target[len(top):]]
            elif m.issym():
                mode, data = "120000", m.linkname.encode("utf-8", "surrogateescape")
            elif m.isreg():
                mode = "100755" if m.mode & 0o100 else "100644"
                data = tar.extractfile(m).read()
            else:
                print("tar-to-git: %s: unsupported member type %r" % (m.name, m.type),
                      file=sys.stderr)
                return 1
            if not m.islnk():
                sha = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
                out.write(b"blob\ndata %d\n" % len(data))
                out.write(data)
                out.write(b"\n")
            seen[path] = (mode, sha)
            idx.write(("%s %s\t" % (mode, sha)).encode()
                      + path.encode("utf-8", "surrogateescape") + b"\0")
            nfiles += 1
    out.write(b"done\n")
    out.flush()
    if not nfiles:
        print("tar-to-git: no files under %s" % top, file=sys.stderr)
    return 0 if nfiles else 1


if __name__ == "__main__":
    sys.exit(main())
