// powercutfs is a passthrough FUSE filesystem that simulates a power cut. It serves a backing
// directory at a mount point and records what a disk would hold for sure: a file's content as of its
// last fsync or fdatasync, and a directory's entries as of its last fsync (a new file's name is not
// durable until its directory is synced, as POSIX allows). On SIGUSR1 it unmounts and rolls the
// backing directory back to exactly that, dropping every unsynced write and entry, then exits.
// SIGTERM or SIGINT unmount and exit with the backing directory as it is.
//
//	powercutfs -backing DIR -mount DIR [-ignore-dir-fsync REL,REL...]
//
// -ignore-dir-fsync answers the fsyncs of those directories (relative to the root, "." for the root)
// without honouring them: a mutant, so a test can prove the power cut catches a missing fsync.
//
// Prints one JSON line on stdout when mounted ({"event":"mounted"}) and one when done
// ({"event":"cut"|"unmounted", ...counts}).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// node is a loopback node that tells the durability model what it creates and syncs.
type node struct {
	fs.LoopbackNode
	d *durability
}

func (n *node) backingPath() string {
	return filepath.Join(n.RootData.Path, n.Path(nil))
}

func (n *node) relativePath() string {
	return filepath.Clean(n.Path(nil)) // "" (the root) becomes "."
}

var _ = (fs.NodeCreater)((*node)(nil))

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	n.d.mu.Lock() // held across the create, so no directory sync sees the inode before it is known
	defer n.d.mu.Unlock()
	path := filepath.Join(n.backingPath(), name)
	_, statErr := os.Lstat(path)
	inode, fh, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno == 0 && os.IsNotExist(statErr) {
		n.d.created(path)
	}
	return inode, fh, fuseFlags, errno
}

var _ = (fs.NodeMkdirer)((*node)(nil))

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.d.mu.Lock()
	defer n.d.mu.Unlock()
	inode, errno := n.LoopbackNode.Mkdir(ctx, name, mode, out)
	if errno == 0 {
		n.d.created(filepath.Join(n.backingPath(), name))
	}
	return inode, errno
}

var _ = (fs.NodeMknoder)((*node)(nil))

func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.d.mu.Lock()
	defer n.d.mu.Unlock()
	inode, errno := n.LoopbackNode.Mknod(ctx, name, mode, rdev, out)
	if errno == 0 {
		n.d.created(filepath.Join(n.backingPath(), name))
	}
	return inode, errno
}

var _ = (fs.NodeFsyncer)((*node)(nil))

// Fsync serves fsync and fdatasync of a file (a directory's fsync goes to its handle, below).
func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	fder, ok := f.(fs.FilePassthroughFder)
	if !ok {
		return syscall.EBADF
	}
	fd, ok := fder.PassthroughFd()
	if !ok {
		return syscall.EBADF
	}
	return n.d.syncFile(fd)
}

var _ = (fs.NodeOpendirHandler)((*node)(nil))

func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	stream, ok := fh.(dirStream)
	if !ok {
		panic("the loopback directory handle no longer reads, seeks and releases")
	}
	return &dirHandle{dirStream: stream, n: n}, fuseFlags, 0
}

type dirStream interface {
	fs.FileReaddirenter
	fs.FileSeekdirer
	fs.FileReleasedirer
}

// dirHandle is the loopback's directory handle with its fsync taken over by the model.
type dirHandle struct {
	dirStream
	n *node
}

var _ = (fs.FileFsyncdirer)((*dirHandle)(nil))

func (h *dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	return h.n.d.syncDir(h.n.relativePath(), h.n.backingPath())
}

func report(event string, s stats) {
	line, _ := json.Marshal(struct {
		Event string `json:"event"`
		stats
	}{event, s})
	fmt.Println(string(line))
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "powercutfs: "+format+"\n", args...)
	os.Exit(1)
}

// unmount retries while the mount is busy: the processes using it were just killed, and the kernel
// may still be closing their files.
func unmount(server *fuse.Server) error {
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err = server.Unmount(); err == nil {
			return nil
		}
	}
	return err
}

func main() {
	backing := flag.String("backing", "", "the directory served (and rolled back on a power cut)")
	mountPoint := flag.String("mount", "", "where to mount it")
	ignore := flag.String("ignore-dir-fsync", "", "comma-separated directories (relative, \".\" for the root) whose fsyncs are not honoured")
	flag.Parse()
	if *backing == "" || *mountPoint == "" {
		fail("usage: powercutfs -backing DIR -mount DIR [-ignore-dir-fsync REL,...]")
	}
	root, err := filepath.Abs(*backing)
	if err != nil {
		fail("%v", err)
	}
	ignored := map[string]bool{}
	for _, rel := range strings.Split(*ignore, ",") {
		if rel != "" {
			ignored[filepath.Clean(rel)] = true
		}
	}
	d, err := newDurability(root, ignored)
	if err != nil {
		fail("reading %s: %v", root, err)
	}

	var st syscall.Stat_t
	if err := syscall.Stat(root, &st); err != nil {
		fail("%s: %v", root, err)
	}
	loopback := &fs.LoopbackRoot{Path: root, Dev: uint64(st.Dev)}
	loopback.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return &node{LoopbackNode: fs.LoopbackNode{RootData: r}, d: d}
	}
	loopback.RootNode = loopback.NewNode(loopback, nil, "", &st)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGUSR1, syscall.SIGTERM, syscall.SIGINT)
	server, err := fs.Mount(*mountPoint, loopback.RootNode, &fs.Options{
		MountOptions: fuse.MountOptions{
			DirectMountStrict: true, // mount(2) as root: no fusermount needed
			FsName:            "powercutfs",
			Name:              "powercutfs",
		},
	})
	if err != nil {
		fail("mounting %s: %v", *mountPoint, err)
	}
	report("mounted", d.stats)

	sig := <-signals
	if err := unmount(server); err != nil {
		fail("unmounting %s: %v", *mountPoint, err)
	}
	server.Wait()
	if sig != syscall.SIGUSR1 {
		report("unmounted", d.stats)
		return
	}
	s, err := d.cut(root)
	if err != nil {
		fail("power cut of %s: %v", root, err)
	}
	report("cut", s)
}
