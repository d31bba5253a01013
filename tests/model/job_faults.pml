/*
 * The world's moves on a job, for job.pml (which includes this file after
 * its Member): a second runner with a held id (DUPS), the loss of the
 * job's state (LOSSES), and a new run of the name after that loss or
 * after the job ended broken or stopped (RERUNS). Dup and Rerun check, as
 * each runs CMD, that no other copy of that member's CMD runs.
 */

/* a second runner started with member 0's id (another nonce) while the
 * job enters or runs: job-enter answers 'dup' while member 0's lease runs
 * and the newcomer is refused (exit 2); once that lease has passed it
 * takes the place (the lease's expiry breaks a running job: not followed
 * here) */
proctype Dup()
{
	byte a;
end_early:
	atomic {
		(ent[att] & B(0)) != 0 && jout[att] == NONE ->
		a = att;
#ifndef MUT_DUP_JOINS
		goto refused
#else
		skip
#endif
	};
	/* counted as member 0: runs CMD once everyone entered */
end_joined:
	atomic { ent[a] == ALL -> assert(cmds[0] == 0); cmds[0]++ };
refused:
	skip
}

/* Redis loses the job's state while it runs: FLUSHALL (the keeper with
 * it), or an eviction of the job's keys (the keeper and its record stay,
 * holding back a new run for the members whose lease it covers).
 * Every member's next look finds it gone: the break stands for that. */
proctype Loss()
{
end:	/* it may never come */
	atomic {
		ent[att] == ALL && jout[att] == NONE ->
		pend = ent[att] & ~jexp;
		if
		:: keeper = 0; rec = 0
		:: pend = pend & recm; rec = (pend != 0)
		fi;
		kr = 0;
		jlost = 1;
		jout[att] = BRK;
		if
		:: xout[xg] == NONE -> xout[xg] = BRK; xg++
		:: else
		fi;
		jshut = 1
	}
}

/* A new run of the name started right after the loss, as member 0 on
 * another host: its entry (job-enter, a new runner) reads the keeper;
 * once its run has entered, CMD starts. */
proctype Rerun()
{
	byte i;
end_early:	/* started only after a loss, or once the job ended */
	atomic {
		(jlost || (RERUNS > 0 && jshut && jout[att] != OK)) ->
		if
		:: jlost ->
			if
			:: !keeper ->
				if
				:: marker -> quar = 1
				:: else
				fi;
				marker = 1;
				keeper = 1
#ifndef MUT_JOB_LOSS_NO_RECORD
			:: keeper && rec -> quar = 1
#endif
			:: else
			fi
		:: else ->
			/* the job hash says over or stopped: the record of
			 * the leases of every member that renewed, in any
			 * attempt, holds the new run back (those it covers) */
			pend = 0;
			for (i : 0 .. K) {
				pend = pend | ent[i]
			}
			pend = pend & ~jexp & recm;
#ifndef MUT_JOB_RERUN_NO_WAIT
			quar = 1
#else
			skip
#endif
		fi
	};
end_held:	/* held back while an old member may run */
	atomic {
		!quar || (pend & ~jexp) == 0 ->
		/* one copy of rank 0: the old one's CMD has stopped */
		assert(cmds[0] == 0);
		cmds[0]++
	}
}
