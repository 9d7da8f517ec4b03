/* rdggen's MPI test program: every rank exchanges with every other rank
 * (MPI_Alltoall) and all ranks sum their numbers (MPI_Allreduce), over
 * whatever transport mpirun selected (the TCP BTL in the namespace tests).
 * Prints one line per rank and exits 0 when both results are right.
 * Arguments: "exit=N" makes rank 1 exit with status N after the exchange;
 * "sleep=S" makes every rank sleep S seconds first; "env=A,B" makes every
 * rank print "rank R env A=value B=value" (unset: A=<unset>) first.
 * A rank waits for its collectives by testing them every millisecond and
 * sleeping between tests: Open MPI's blocking calls poll without a pause
 * (sched_yield with mpi_yield_when_idle), and the ranks of the jobs the
 * tests expect to hang (a peer blocked, a rank gone) took a fifth of the
 * test machine's CPU so. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* wait_for completes req as MPI_Wait does, testing it once a millisecond. */
static void wait_for(MPI_Request *req) {
	const struct timespec ms = {0, 1000000};
	int done = 0;
	for (;;) {
		MPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (done) return;
		nanosleep(&ms, NULL);
	}
}

int main(int argc, char **argv) {
	int rank, size, i, exit_rank1 = 0, nap = 0;
	char *env = NULL;
	for (i = 1; i < argc; i++) {
		if (strncmp(argv[i], "exit=", 5) == 0) exit_rank1 = atoi(argv[i] + 5);
		if (strncmp(argv[i], "sleep=", 6) == 0) nap = atoi(argv[i] + 6);
		if (strncmp(argv[i], "env=", 4) == 0) env = argv[i] + 4;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (env != NULL) {
		char names[1024], *name, *save = NULL;
		snprintf(names, sizeof names, "%s", env);
		printf("rank %d env", rank);
		for (name = strtok_r(names, ",", &save); name != NULL; name = strtok_r(NULL, ",", &save)) {
			const char *v = getenv(name);
			printf(" %s=%s", name, v != NULL ? v : "<unset>");
		}
		printf("\n");
		fflush(stdout);
	}
	if (nap > 0) sleep(nap);
	int *out = malloc(sizeof(int) * size), *in = malloc(sizeof(int) * size);
	for (i = 0; i < size; i++) out[i] = rank * 1000 + i;
	MPI_Request req;
	MPI_Ialltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD, &req);
	wait_for(&req);
	int ok = 1;
	for (i = 0; i < size; i++) ok = ok && in[i] == i * 1000 + rank;
	int mine = rank + 1, sum = 0;
	MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
	wait_for(&req);
	ok = ok && sum == size * (size + 1) / 2;
	printf("rank %d of %d: alltoall %s, allreduce %d\n", rank, size, ok ? "ok" : "WRONG", sum);
	fflush(stdout);
	if (rank == 1 && exit_rank1 != 0) exit(exit_rank1);
	MPI_Finalize();
	return ok ? 0 : 1;
}
