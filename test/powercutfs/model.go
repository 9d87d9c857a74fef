package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
)

// entry is one name in a directory as the disk would have it after a power cut.
type entry struct {
	id    uint64
	isDir bool
	mode  os.FileMode
}

// durability records what the disk holds for sure: the content of each file as of its last
// fsync/fdatasync, and the entries of each directory as of its last fsync. Files and directories are
// known by an identity of their own, not by inode number, since a backing filesystem may reuse the
// number of a removed file for a new one while a durable entry still names the old.
type durability struct {
	mu      sync.Mutex
	nextID  uint64
	byInode map[uint64]uint64           // backing inode -> identity of what lives there now
	files   map[uint64][]byte           // identity -> durable content (absent: empty)
	dirs    map[uint64]map[string]entry // identity -> durable entries (absent: none)
	// Directories (relative to the root, "." for the root) whose fsyncs are answered but not honoured:
	// the mutant, a broker that forgot to sync that directory.
	ignored map[string]bool
	stats   stats
}

type stats struct {
	FileSyncs        int `json:"fileSyncs"`
	DirSyncs         int `json:"dirSyncs"`
	IgnoredDirSyncs  int `json:"ignoredDirSyncs"`
	FilesBefore      int `json:"filesBefore"`
	BytesBefore      int `json:"bytesBefore"`
	FilesAfter       int `json:"filesAfter"`
	BytesAfter       int `json:"bytesAfter"`
	DirectoriesAfter int `json:"directoriesAfter"`
}

func inodeOf(info os.FileInfo) uint64 {
	return info.Sys().(*syscall.Stat_t).Ino
}

// newDurability takes everything under root as durable: it is the disk as found at mount time.
func newDurability(root string, ignored map[string]bool) (*durability, error) {
	d := &durability{
		byInode: map[uint64]uint64{},
		files:   map[uint64][]byte{},
		dirs:    map[uint64]map[string]entry{},
		ignored: ignored,
	}
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		id := d.fresh(inodeOf(info))
		switch {
		case info.IsDir():
			entries, err := d.currentEntries(path)
			if err != nil {
				return err
			}
			d.dirs[id] = entries
		case info.Mode().IsRegular():
			content, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			d.files[id] = content
		}
		return nil
	})
	return d, err
}

// fresh gives the inode a new identity: a file or directory was just created there.
func (d *durability) fresh(ino uint64) uint64 {
	d.nextID++
	d.byInode[ino] = d.nextID
	return d.nextID
}

func (d *durability) identity(ino uint64) uint64 {
	if id, ok := d.byInode[ino]; ok {
		return id
	}
	return d.fresh(ino)
}

// created notes that `path` (in the backing store) is a new file or directory.
func (d *durability) created(path string) {
	if info, err := os.Lstat(path); err == nil {
		d.fresh(inodeOf(info))
	}
}

func (d *durability) currentEntries(dir string) (map[string]entry, error) {
	list, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	entries := map[string]entry{}
	for _, e := range list {
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if !info.IsDir() && !info.Mode().IsRegular() {
			continue // only files and directories survive a power cut here
		}
		entries[e.Name()] = entry{id: d.identity(inodeOf(info)), isDir: info.IsDir(), mode: info.Mode().Perm()}
	}
	return entries, nil
}

// syncFile makes the file open as `fd` durable as it is now: content and size.
func (d *durability) syncFile(fd int) syscall.Errno {
	// Read through a descriptor of our own: `fd` may be open for writing only, and the file may be
	// unlinked already (an open file keeps its /proc/self/fd link).
	f, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		return syscall.EIO
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return syscall.EIO
	}
	content, err := io.ReadAll(f)
	if err != nil {
		return syscall.EIO
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stats.FileSyncs++
	d.files[d.identity(inodeOf(info))] = content
	return 0
}

// syncDir makes the entries of the directory at `path` (backing store) durable as they are now.
func (d *durability) syncDir(rel, path string) syscall.Errno {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ignored[rel] {
		d.stats.IgnoredDirSyncs++
		return 0
	}
	info, err := os.Lstat(path)
	if err != nil {
		return syscall.EIO
	}
	entries, err := d.currentEntries(path)
	if err != nil {
		return syscall.EIO
	}
	d.stats.DirSyncs++
	d.dirs[d.identity(inodeOf(info))] = entries
	return 0
}

// cut replaces the tree at root with what survives a power cut: from the root down, only entries made
// durable by a directory fsync, each file with only its synced content.
func (d *durability) cut(root string) (stats, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	_ = filepath.Walk(root, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			d.stats.FilesBefore++
			d.stats.BytesBefore += int(info.Size())
		}
		return nil
	})
	rootInfo, err := os.Lstat(root)
	if err != nil {
		return d.stats, err
	}
	staging := root + ".after-power-cut"
	if err := os.RemoveAll(staging); err != nil {
		return d.stats, err
	}
	if err := os.Mkdir(staging, rootInfo.Mode().Perm()); err != nil {
		return d.stats, err
	}
	if err := d.rebuild(d.identity(inodeOf(rootInfo)), staging, map[uint64]bool{}); err != nil {
		return d.stats, err
	}
	if err := os.RemoveAll(root); err != nil {
		return d.stats, err
	}
	return d.stats, os.Rename(staging, root)
}

func (d *durability) rebuild(dirID uint64, into string, onPath map[uint64]bool) error {
	if onPath[dirID] {
		return fmt.Errorf("directory cycle at %s", into)
	}
	onPath[dirID] = true
	defer delete(onPath, dirID)
	names := make([]string, 0, len(d.dirs[dirID]))
	for name := range d.dirs[dirID] {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		e := d.dirs[dirID][name]
		path := filepath.Join(into, name)
		if e.isDir {
			if err := os.Mkdir(path, e.mode); err != nil {
				return err
			}
			d.stats.DirectoriesAfter++
			if err := d.rebuild(e.id, path, onPath); err != nil {
				return err
			}
			continue
		}
		content := d.files[e.id]
		if err := os.WriteFile(path, content, e.mode); err != nil {
			return err
		}
		d.stats.FilesAfter++
		d.stats.BytesAfter += len(content)
	}
	return nil
}
