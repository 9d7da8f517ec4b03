package netnstest

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// WorkerImage is a root filesystem tar for `docker import`, made from this
// machine's own binaries and their libraries: what a Horovod image offers the
// tests — sh, bash, OpenSSH's sshd and ssh, Open MPI (mpirun, orted, its
// plugins and help texts), the test program prog at /usr/local/bin/allreduce
// (BuildMPIProgram) and the extra files. Nothing is pulled. Needs RequireMPI.
func WorkerImage(t TB, prog string, extra ...ImageFile) []byte {
	t.Helper()
	return buildImage(t, prog, nil, extra...)
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
// libraries, or directory trees) it adds as they are here.
func buildImage(t TB, prog string, more []string, extra ...ImageFile) []byte {
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
		if err := b.add(p); err != nil {
			t.Fatalf("worker image: %v", err)
		}
	}
	if prog == "" {
		if err := b.tw.Close(); err != nil {
			t.Fatal(err)
		}
		return b.buf.Bytes()
	}
	for _, p := range []string{"/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/mpirun", "/usr/bin/orterun", "/usr/bin/orted"} {
		if err := b.add(p); err != nil {
			t.Fatalf("worker image: %v", err)
		}
	}
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu/openmpi", "/usr/lib/x86_64-linux-gnu/pmix2", "/usr/share/openmpi", "/usr/share/pmix", "/etc/openmpi"} {
		if err := b.tree(dir); err != nil {
			t.Fatalf("worker image: %v", err)
		}
	}
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
	data, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	b.file("/usr/local/bin/allreduce", 0o755, data)
	for _, f := range extra {
		b.file(f.Path, f.Mode, f.Data)
	}
	if err := b.libs(prog); err != nil {
		t.Fatalf("worker image: %v", err)
	}
	if err := b.tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.buf.Bytes()
}

type imageBuilder struct {
	buf  bytes.Buffer
	tw   *tar.Writer
	seen map[string]bool
	err  error
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
			if b.seen[strings.TrimPrefix(next, "/")] {
				return nil
			}
			data, err := os.ReadFile(next)
			if err != nil {
				return err
			}
			b.file(next, int64(fi.Mode().Perm()), data)
			if bytes.HasPrefix(data, []byte("\x7fELF")) {
				return b.libs(next)
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

var lddPath = regexp.MustCompile(`(?m)(?:=> )?(/[^ ]+) \(0x`)

// libs adds the shared libraries ldd finds for the ELF file p.
func (b *imageBuilder) libs(p string) error {
	out, err := exec.Command("ldd", p).Output()
	if err != nil {
		return nil // static, or not a dynamic object
	}
	for _, m := range lddPath.FindAllStringSubmatch(string(out), -1) {
		if err := b.add(m[1]); err != nil {
			return err
		}
	}
	return nil
}
