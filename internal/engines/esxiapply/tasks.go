package esxiapply

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/task"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// taskWaiter waits for many vSphere tasks with one PropertyCollector retrieve
// of all pending tasks per poll, instead of govmomi's Task.Wait, which creates
// a property collector, a filter and a long-poll per task (about 5 round trips
// each). A poll follows right after a task is added, then backs off from 1 ms
// to 500 ms while nothing finishes.
type taskWaiter struct {
	c       *vim25.Client
	mu      sync.Mutex
	pending map[types.ManagedObjectReference]chan error
	wake    chan struct{}
}

func newTaskWaiter(c *vim25.Client) *taskWaiter {
	return &taskWaiter{c: c, pending: map[types.ManagedObjectReference]chan error{}, wake: make(chan struct{}, 1)}
}

// wait blocks until the task ends and returns its error.
func (w *taskWaiter) wait(ctx context.Context, ref types.ManagedObjectReference) error {
	ch := make(chan error, 1)
	w.mu.Lock()
	w.pending[ref] = ch
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		w.mu.Lock()
		delete(w.pending, ref)
		w.mu.Unlock()
		return ctx.Err()
	}
}

// run polls until ctx ends; start it in its own goroutine.
func (w *taskWaiter) run(ctx context.Context) {
	pc := property.DefaultCollector(w.c)
	backoff := time.Duration(0)
	for {
		w.mu.Lock()
		refs := make([]types.ManagedObjectReference, 0, len(w.pending))
		for ref := range w.pending {
			refs = append(refs, ref)
		}
		w.mu.Unlock()
		if len(refs) == 0 {
			backoff = 0
			select {
			case <-ctx.Done():
				return
			case <-w.wake:
				continue
			}
		}
		if backoff > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
		}
		var tasks []mo.Task
		err := pc.Retrieve(ctx, refs, []string{"info.state", "info.error"}, &tasks)
		if err != nil && ctx.Err() != nil {
			return
		}
		done := 0
		w.mu.Lock()
		if err != nil {
			// The poll itself failed: every pending task gets that error
			// rather than hanging the apply.
			for _, ref := range refs {
				if ch, ok := w.pending[ref]; ok {
					ch <- fmt.Errorf("waiting for task %s: %w", ref.Value, err)
					delete(w.pending, ref)
					done++
				}
			}
		}
		for _, t := range tasks {
			ch, ok := w.pending[t.Self]
			if !ok {
				continue
			}
			switch t.Info.State {
			case types.TaskInfoStateSuccess:
				ch <- nil
			case types.TaskInfoStateError:
				ch <- taskError(t.Info)
			default:
				continue
			}
			delete(w.pending, t.Self)
			done++
		}
		w.mu.Unlock()
		switch {
		case done > 0:
			backoff = 0
		case backoff == 0:
			backoff = time.Millisecond
		case backoff < 500*time.Millisecond:
			backoff *= 2
		}
	}
}

// taskError turns a failed task's fault into an error with its message.
func taskError(info types.TaskInfo) error {
	if info.Error == nil {
		return errors.New("task failed without a fault")
	}
	return withCause(task.Error{LocalizedMethodFault: info.Error, Description: info.Description})
}
