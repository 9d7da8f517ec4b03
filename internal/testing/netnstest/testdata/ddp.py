# netnstest: a small PyTorch DDP job for torchrun (gloo backend, CPU).
#
# Every rank trains the same tiny linear model on its own data for a few
# steps. After each backward pass DDP has averaged the gradients over all
# ranks; each rank gathers every rank's gradients and checks that they are
# the same (and equal to the mean of the ranks' local gradients, computed
# here without DDP). It then prints the peers it reached: the remote
# addresses of its own established TCP connections (Gloo's pairs and the
# rendezvous store), read from /proc.
#
# Arguments (all optional): steps=N, exit=RANK:CODE (that rank exits CODE
# after the first step, without teardown), sleep=SECONDS (every rank sleeps
# in the middle of the job), env=NAME,NAME (print those variables).
#
# With steps=0 the ranks neither import torch nor join a process group: the
# rank of exit=RANK:CODE (torchrun's RANK) exits CODE at once and the others
# sleep. That is a job for testing how its launcher stops it, without the
# second of CPU every rank spends importing torch.
import os
import sys
import time


def peers():
    """Remote IPv4 addresses of this process's established TCP sockets."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    out = set()
    with open("/proc/self/net/tcp") as f:
        next(f)
        for line in f:
            p = line.split()
            if p[3] != "01" or p[9] not in inodes:  # 01: ESTABLISHED
                continue
            h = p[2].split(":")[0]
            addr = ".".join(str(int(h[i:i + 2], 16)) for i in (6, 4, 2, 0))
            if not addr.startswith("127."):
                out.add(addr)
    return sorted(out)


def without_torch(opts):
    """steps=0: exit=RANK:CODE's rank exits at once, the others sleep."""
    rank = int(os.environ["RANK"])
    if "exit" in opts:
        r, code = opts["exit"].split(":")
        if int(r) == rank:
            print("rank %d exits %s" % (rank, code), flush=True)
            os._exit(int(code))
    if "sleep" in opts:
        print("rank %d sleeps" % rank, flush=True)
        time.sleep(float(opts["sleep"]))


def main():
    opts = dict(a.split("=", 1) for a in sys.argv[1:])
    steps = int(opts.get("steps", "3"))
    if steps == 0:
        without_torch(opts)
        return
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ["LOCAL_RANK"])
    for name in filter(None, opts.get("env", "").split(",")):
        print("rank %d env %s=%s" % (rank, name, os.environ.get(name, "")), flush=True)

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for step in range(steps):
        # Each rank's own batch, reproducible on every rank.
        def batch(r):
            g = torch.Generator().manual_seed(1000 * step + r)
            return torch.randn(8, 4, generator=g), torch.randn(8, 2, generator=g)

        # The mean of every rank's local gradient, computed here alone.
        ref = torch.nn.Linear(4, 2)
        ref.load_state_dict(model.state_dict())
        want = [torch.zeros_like(p) for p in ref.parameters()]
        for r in range(world):
            ref.zero_grad()
            x, y = batch(r)
            torch.nn.functional.mse_loss(ref(x), y).backward()
            for w, p in zip(want, ref.parameters()):
                w += p.grad / world

        opt.zero_grad()
        x, y = batch(rank)
        torch.nn.functional.mse_loss(ddp(x), y).backward()
        grads = torch.cat([p.grad.flatten() for p in model.parameters()])
        every = [torch.zeros_like(grads) for _ in range(world)]
        dist.all_gather(every, grads)
        for r, g in enumerate(every):
            if not torch.equal(g, grads):
                print("rank %d step %d: rank %d's averaged gradients differ" % (rank, step, r), flush=True)
                sys.exit(2)
        if not torch.allclose(grads, torch.cat([w.flatten() for w in want]), atol=1e-6):
            print("rank %d step %d: the averaged gradients are not the ranks' mean" % (rank, step), flush=True)
            sys.exit(2)
        opt.step()
        if step == 0 and "exit" in opts:
            r, code = opts["exit"].split(":")
            if int(r) == rank:
                print("rank %d exits %s" % (rank, code), flush=True)
                # At once, as a crashed rank does: sys.exit would run the
                # interpreter's teardown, where gloo's process group can
                # wait on the peers (asleep here), and torchrun would see
                # the rank alive for as long (once over 5 minutes under load).
                os._exit(int(code))
        if step == 0 and "sleep" in opts:
            print("rank %d sleeps" % rank, flush=True)
            time.sleep(float(opts["sleep"]))
        if step == steps - 1:
            # Before the last barrier: a rank past it may already have
            # closed its connections (destroy_process_group), and a slower
            # rank reading them afterwards would find them closing
            # (CLOSE_WAIT), not established.
            reached = peers()
        dist.barrier()
    print("rank %d of %d (local %d): %d steps, gradients agree, peers %s"
          % (rank, world, local, steps, ",".join(reached)), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
