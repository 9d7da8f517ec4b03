package netnstest

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// WorkerImage is a root filesystem tar for `docker import`, made from this
// machine's own binaries and their libraries: what a Horovod image offers the
// tests — sh, bash, OpenSSH's sshd and ssh, Open MPI (mpirun, orted, its
// plugins and help texts), the test program prog at /usr/local/bin/allreduce
// (BuildMPIProgram) and the extra files. Nothing is pulled. Needs RequireMPI.
//
// The image is built once per process for each program and set of extra
// files (by content) and shared: callers must not modify the slice.
func WorkerImage(t TB, prog string, extra ...ImageFile) []byte {
	t.Helper()
	return cachedImage(t, prog, nil, extra...)
}

// cachedImage is buildImage(t, prog, more, extra...), built once per process
// for each program content, list of more paths and set of extra files.
// Concurrent callers with other inputs wait for each other's builds.
func cachedImage(t TB, prog string, more []string, extra ...ImageFile) []byte {
	t.Helper()
	data, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	h.Write(data)
	for _, p := range more {
		fmt.Fprintf(h, "\x00more\x00%s", p)
	}
	for _, f := range extra {
		fmt.Fprintf(h, "\x00%s\x00%o\x00%d\x00", f.Path, f.Mode, len(f.Data))
		h.Write(f.Data)
	}
	key := string(h.Sum(nil))
	workerImages.Lock()
	defer workerImages.Unlock()
	if img, ok := workerImages.m[key]; ok {
		return img
	}
	img := buildImage(t, prog, more, extra...)
	if workerImages.m == nil {
		workerImages.m = map[string][]byte{}
	}
	workerImages.m[key] = img
	return img
}

// workerImages are the images cachedImage built, by the hash of the
// program's content, the more paths and the extra files.
var workerImages struct {
	sync.Mutex
	m map[string][]byte
}

// ImageFile is a file WorkerImage adds.
type ImageFile struct {
	Path string
	Mode int64
	Data []byte
}

// ImageWithoutSSHD is WorkerImage without sshd and Open MPI: a worker made
// from it cannot start.
func ImageWithoutSSHD(t TB) []byte {
	t.Helper()
	return buildImage(t, "", nil)
}

// buildImage builds the image; more are further paths (files with their
// libraries, or directory trees) it adds as they are here. An image with a
// program starts from workerBase's entries for it, built once per process.
func buildImage(t TB, prog string, more []string, extra ...ImageFile) []byte {
	if prog == "" {
		b := newImage()
		if err := b.flushLibs(); err != nil {
			t.Fatalf("worker image: %v", err)
		}
		if err := b.tw.Close(); err != nil {
			t.Fatal(err)
		}
		return b.buf.Bytes()
	}
	base := workerBase(t, prog)
	b := &imageBuilder{seen: make(map[string]bool, len(base.seen)), mounted: baseHostMounts}
	for k := range base.seen {
		b.seen[k] = true
	}
	b.buf.Write(base.data)
	b.tw = tar.NewWriter(&b.buf)
	// The runtime binds baseHostMounts and those an extra HostMountsFile
	// lists: one file holds them all.
	mounts := slices.Clone(baseHostMounts)
	extra = slices.Clone(extra)
	for i, f := range extra {
		if f.Path == HostMountsFile {
			for _, p := range strings.Fields(string(f.Data)) {
				if !slices.Contains(mounts, p) {
					mounts = append(mounts, p)
				}
			}
			extra = slices.Delete(extra, i, i+1)
			break
		}
	}
	b.file(HostMountsFile, 0o644, []byte(strings.Join(mounts, "\n")+"\n"))
	for _, p := range more {
		fi, err := os.Stat(p)
		if err == nil && fi.IsDir() {
			err = b.tree(p)
		} else if err == nil {
			err = b.add(p)
		}
		if err != nil {
			t.Fatalf("worker image: %v", err)
		}
	}
	for _, f := range extra {
		b.file(f.Path, f.Mode, f.Data)
	}
	if err := b.flushLibs(); err != nil {
		t.Fatalf("worker image: %v", err)
	}
	if err := b.tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.buf.Bytes()
}

// newImage starts an image with what every one has: the directories, the
// files of /etc a login needs, a shell and a few tools.
func newImage() *imageBuilder {
	b := &imageBuilder{seen: map[string]bool{}}
	b.tw = tar.NewWriter(&b.buf)
	for _, d := range []struct {
		name string
		mode int64
	}{{"tmp", 0o1777}, {"root", 0o700}, {"run", 0o755}, {"var", 0o755}, {"var/empty", 0o755}, {"proc", 0o555}, {"sys", 0o555}, {"dev", 0o755}, {"etc", 0o755}, {"usr/local/bin", 0o755}} {
		b.dir("/"+d.name, d.mode)
	}
	b.file("/etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/bash\nsshd:x:100:65534::/run/sshd:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"))
	b.file("/etc/group", 0o644, []byte("root:x:0:\nnogroup:x:65534:\n"))
	b.file("/etc/nsswitch.conf", 0o644, []byte("passwd: files\ngroup: files\nhosts: files\n"))
	b.file("/etc/hosts", 0o644, []byte("127.0.0.1 localhost\n"))
	for _, p := range []string{"/bin/sh", "/bin/bash", "/bin/mkdir", "/bin/sleep", "/bin/cat", "/bin/ls", "/usr/bin/env", "/usr/bin/test"} {
		if b.err == nil {
			b.err = b.add(p)
		}
	}
	return b
}

// imageBase is the start of every worker image of one program: its tar
// entries (whole 512-byte blocks, no end marker) and the names they hold.
type imageBase struct {
	data []byte
	seen map[string]bool
}

// imageBases are workerBase's, by the hash of the program's content.
var imageBases struct {
	sync.Mutex
	m map[string]*imageBase
}

// baseHostMounts are what every worker image of a program (workerBase's
// variants) has the hosts' runtime bind read-only from this machine
// (HostMountsFile) instead of holding copies: /usr/lib, with the shared
// libraries of sshd, ssh, Open MPI and the test program and Open MPI's and
// PMIx's plugins; and the links of update-alternatives, through which some
// libraries are found. The image keeps the programs, Open MPI's
// configuration and help texts, and the links into /usr/lib (/lib,
// /lib64's loader): 4.5 MB, not the 47 MB of the copies, for each dockerd
// to import.
var baseHostMounts = []string{"/usr/lib", "/etc/alternatives"}

// workerBase is newImage with sshd, ssh, Open MPI (its programs, plugins,
// help texts and configuration) and prog at /usr/local/bin/allreduce, whose
// libraries the image does not copy but names in HostMountsFile
// (baseHostMounts; buildImage writes the file); built once per process for
// each program content (the variants of WorkerImage and TorchWorkerImage
// only add to it).
func workerBase(t TB, prog string) *imageBase {
	data, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	key := string(sum[:])
	imageBases.Lock()
	defer imageBases.Unlock()
	if base, ok := imageBases.m[key]; ok {
		return base
	}
	b := newImage()
	if b.err != nil {
		t.Fatalf("worker image: %v", b.err)
	}
	b.mounted = baseHostMounts
	for _, p := range []string{"/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/mpirun", "/usr/bin/orterun", "/usr/bin/orted"} {
		if err := b.add(p); err != nil {
			t.Fatalf("worker image: %v", err)
		}
	}
	// Before the tree of /etc/openmpi, which then keeps it.
	params, err := yieldingMCAParams()
	if err != nil {
		t.Fatalf("worker image: %v", err)
	}
	b.file(mcaParamsFile, 0o644, params)
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu/openmpi", "/usr/lib/x86_64-linux-gnu/pmix2", "/usr/share/openmpi", "/usr/share/pmix", "/etc/openmpi"} {
		if err := b.tree(dir); err != nil {
			t.Fatalf("worker image: %v", err)
		}
	}
	b.file("/usr/local/bin/allreduce", 0o755, data)
	b.elf = append(b.elf, prog)
	if err := b.flushLibs(); err != nil {
		t.Fatalf("worker image: %v", err)
	}
	if err := b.tw.Flush(); err != nil {
		t.Fatal(err)
	}
	base := &imageBase{data: b.buf.Bytes(), seen: b.seen}
	if imageBases.m == nil {
		imageBases.m = map[string]*imageBase{}
	}
	imageBases.m[key] = base
	return base
}

type imageBuilder struct {
	buf  bytes.Buffer
	tw   *tar.Writer
	seen map[string]bool
	err  error
	// elf are the ELF files added whose libraries flushLibs has yet to add.
	elf []string
	// mounted are the paths of this machine the runtime binds into the
	// image's containers (HostMountsFile): add skips the files under them.
	mounted []string
}

// isMounted reports whether p is one of b.mounted or under one.
func (b *imageBuilder) isMounted(p string) bool {
	for _, m := range b.mounted {
		if p == m || strings.HasPrefix(p, m+"/") {
			return true
		}
	}
	return false
}

func (b *imageBuilder) header(h *tar.Header) {
	name := strings.TrimPrefix(h.Name, "/")
	if b.seen[name] || b.err != nil {
		return
	}
	b.seen[name] = true
	h.Name = name
	b.err = b.tw.WriteHeader(h)
}

func (b *imageBuilder) dir(p string, mode int64) {
	b.header(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: mode})
}

func (b *imageBuilder) file(p string, mode int64, data []byte) {
	if b.seen[strings.TrimPrefix(p, "/")] {
		return
	}
	b.parents(p)
	b.header(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: mode, Size: int64(len(data))})
	if b.err == nil {
		_, b.err = b.tw.Write(data)
	}
}

// parents adds p's parent directories (as they are on this machine).
func (b *imageBuilder) parents(p string) {
	var dirs []string
	for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
		dirs = append(dirs, d)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		mode := int64(0o755)
		if fi, err := os.Stat(dirs[i]); err == nil {
			mode = int64(fi.Mode().Perm())
		}
		b.dir(dirs[i], mode)
	}
}

// add copies path p into the image as it is here: each symbolic link on the
// way as a link, then the file (with its libraries when it is an ELF
// program or library).
func (b *imageBuilder) add(p string) error {
	p = filepath.Clean(p)
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := "/"
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(next)
			if err != nil {
				return err
			}
			b.parents(next)
			b.header(&tar.Header{Typeflag: tar.TypeSymlink, Name: next, Linkname: target})
			if !filepath.IsAbs(target) {
				target = filepath.Join(cur, target)
			}
			return b.add(filepath.Join(append([]string{target}, parts[i+1:]...)...))
		case fi.IsDir():
			cur = next
			continue
		default:
			if b.seen[strings.TrimPrefix(next, "/")] || b.isMounted(next) {
				return nil
			}
			data, err := os.ReadFile(next)
			if err != nil {
				return err
			}
			b.file(next, int64(fi.Mode().Perm()), data)
			if bytes.HasPrefix(data, []byte("\x7fELF")) {
				b.elf = append(b.elf, next) // its libraries: flushLibs
			}
			return b.err
		}
	}
	return b.err
}

// tree adds every file under dir (a missing dir, and links to nothing, are
// skipped).
func (b *imageBuilder) tree(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			continue // a dangling link (torch's include/ points to headers python3-torch does not install)
		}
		if err := b.add(p); err != nil {
			return err
		}
	}
	return nil
}

var lddPath = regexp.MustCompile(`(?m)(?:=> )?(/\S+) \(0x`)

// flushLibs adds the shared libraries ldd finds for the ELF files added so
// far, and theirs, until none is new. One ldd runs for up to 256 files (a
// worker image with PyTorch holds hundreds): ldd prints each file's
// libraries under its name, and a static file or one that is no dynamic
// object among them only makes ldd's exit status non-zero.
func (b *imageBuilder) flushLibs() error {
	for len(b.elf) > 0 && b.err == nil {
		n := min(len(b.elf), 256)
		batch := b.elf[:n:n]
		b.elf = b.elf[n:]
		out, _ := exec.Command("ldd", batch...).Output()
		for _, m := range lddPath.FindAllStringSubmatch(string(out), -1) {
			if err := b.add(m[1]); err != nil {
				return err
			}
		}
	}
	return b.err
}
