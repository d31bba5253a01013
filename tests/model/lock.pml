/*
 * The lock of rbarrier (DESIGN.md "Locks": `rbarrier lock`), as the design
 * specifies it (not implemented yet): K slots, waiters served first come
 * first served, a holder's lease renewed while CMD runs, a dead holder's
 * slot freed once its lease has passed, a fencing token that grows with
 * every grant. Each script is one atomic step, each party one process.
 * History events are not modelled: they decide nothing (each script's
 * append to the name's history, lua/includes/history.lua, is read by no
 * script).
 *
 *   P        parties (2..3)          KS       slots (--max)
 *   CRASHES  parties that may die    STALLS   holders cut off past their lease
 *   SIGNALS  waiters that give up (--timeout, a signal)
 *   INFLIGHT a write of a holder cut off that reaches the store late
 * A grant pushes the token onto the grantee's wake list, and a waiter
 * that reads it holds the slot without asking Redis again: the read is a
 * step of its own, and the waiter may stall between the grant and the
 * read (using a STALLS fault), its lease passing meanwhile. Its own clock
 * started at the sending of its last acquire call, before the grant, so
 * it knows the lease has passed whenever Redis does.
 * What the model cannot express: expd is one flag that the server and the
 * party both read, so a party always knows exactly whether its lease has
 * passed; a client clock that starts later than the server's count (a
 * 'held' answer that did not renew, or clock skew) is outside it, and
 * tests/fault/t_lock_fault.sh checks the former. Its 'held' step renews
 * as the script does, so the model checks what follows from that.
 * Key expiry (lock_touch and lock_created in lua/includes/lock.lua) is
 * outside the model: its keys never expire, so the scripts' EXPIREs, and
 * how often they run, change nothing here; tests/integration/t_lock.sh
 * checks that every key of a lock in use has an expiry.
 * The base hash's dl, a lower bound of every holder's and waiter's lease
 * deadline, lets a script skip the scan for expired entries: cov holds the
 * parties whose deadline is not before dl, dlx says dl has passed. The
 * grant trusts that scan: it checks no waiter's lease of its own.
 * A grant pushed to a waiter holds on the server only a short while (2 s)
 * until the grantee confirms it (for parties in SHORTL: a lease longer
 * than that); the short deadline may pass at any moment before the
 * confirmation (a slow or dead grantee: shortl). The woken party confirms
 * with one renewal before its command starts, or (an early grant, read
 * soon after it came) starts it on the short lease, which it counts too,
 * and confirms with its first renewal; a party outside SHORTL (a lease
 * of 2 s or less) holds on the element alone, as before. The nudge
 * to the next in line only times its next call: the model's steps are
 * untimed, so it is not modelled.
 * A loss of state (LOSSES: FLUSHALL, the name's keys evicted, or its
 * holders alone, as an eviction takes one key at a time) at any moment:
 * holders, waiters, grants and dl are gone; a holder running CMD
 * finds out at its next renewal and stops. FLUSHALL takes the keeper
 * (lua/includes/keeper.lua) too, but not the markers in the script cache;
 * an eviction of the name's keys leaves the keeper and its record of the
 * name's holders. A first acquire that finds the keeper gone with a marker
 * there, or any grant step (settle) that finds the record of holders that
 * are not there, holds every grant back until the old holders' leases
 * have passed (the script waits out a
 * time that covers them: lq, a set of parties here). The token is not
 * lost in the model: after a real loss it starts again at the server's
 * clock in microseconds, above every earlier one, which is what going on
 * counting models.
 * Seeded bugs: MUT_LOCK_KEEPER_NO_MARKER (the keeper is made without its
 *   marker loaded first), MUT_LOCK_GRANT_IGNORES_RECORD (a grant does
 *   not look at the keeper's record of the name's holders when they are
 *   not there), MUT_LOCK_RESET_FREES_RECORD (a reset
 *   drops the record, so a loss of the name's keys, its quarantine with
 *   them, lets a grant through beside a revoked holder),
 *   MUT_LOCK_SHORT_NO_CONFIRM (a woken waiter that starts CMD on a
 *   pushed grant before confirming it counts the full lease, while the
 *   server counts only the short one), MUT_LOCK_NO_SLOT_CHECK (a grant does not count the
 *   holders), MUT_TOKEN_NO_GROW (the token does not grow with a grant),
 *   MUT_LOCK_NO_SELF_STOP (a holder that cannot renew keeps CMD running),
 *   MUT_LOCK_WAKE_NO_CLOCK (a waiter that reads its grant late starts CMD
 *   though its own clock says the lease has passed), MUT_LOCK_DL_SKIP (the
 *   scan is skipped although dl has passed), MUT_LOCK_DL_NO_LOWER (a
 *   waiter joining the queue does not lower dl), MUT_LOCK_DL_HOLDERS_ONLY
 *   (the scan sets dl from the holders' deadlines alone).
 */

#ifndef P
#define P 3
#endif
#ifndef KS
#define KS 1
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef STALLS
#define STALLS 1
#endif
#ifndef SIGNALS
#define SIGNALS 1
#endif
#ifndef INFLIGHT
#define INFLIGHT 1
#endif
#ifndef SH
#define SH 0
#endif
#ifndef RESETS
#define RESETS 0
#endif
#ifndef LOSSES
#define LOSSES 0
#endif
/* parties whose lease is longer than a pushed grant's short one */
#ifndef SHORTL
#define SHORTL (B(0) | B(1))
#endif
#ifdef MUT_LOCK_GRANT_IN_QUARANTINE
#define QUARANTINE false
#else
#define QUARANTINE (((revoked | lq) & ~expd) != 0)
#endif

#define B(p) (1 << (p))
#define POP(m) (((m) & 1) + (((m) >> 1) & 1) + (((m) >> 2) & 1))
#define TAKE(x) atomic { x > 0 -> x-- }
/* p's command stops */
#define STOPCMD(p) running--; if :: !(SH & B(p)) -> runx-- :: else fi
/* p lets go of its slot; the last holder's going drops the record */
#define RELEASE(p) if :: holders & B(p) -> holders = holders & ~B(p); if :: holders == 0 -> rec = 0 :: else fi :: else fi
/* p's lease deadline passes; dl, never later than a covered party's
 * deadline, has passed then too */
#define EXPIRE(p) expd = expd | B(p); dlx = dlx | ((cov >> (p)) & 1)
#ifdef MUT_LOCK_DL_SKIP
#define DL_PASSED false
#else
#define DL_PASSED dlx
#endif

/* ---- Redis: rb:l:{NAME} ---- */
byte holders;        /* who holds a slot */
byte expd;           /* parties whose lease has passed */
byte queue[P];       /* the waiters, first come first */
byte qlen;
byte token;          /* the last fencing token granted */
byte tok[P];         /* each holder's token */
byte woken;          /* wake lists holding a grant not yet read */
byte shortl;         /* holders whose grant counts the short lease
                        until they confirm it */
byte cov;            /* dl: parties whose deadline is not before it */
byte tick[P];        /* each waiter's ticket (first come, first served) */
byte revoked;        /* holders a reset revoked that have not confirmed */
byte kicked;         /* waiters a reset sent away, not yet woken */
byte seq;            /* the last ticket */
bit dlx = 1;         /* dl has passed (absent, on a new lock) */

/* ---- the keeper of the name's slot, and the server's script cache ---- */
bit keeper;          /* the keeper hash is there */
bit rec;             /* its record of the name's holders, still ahead */
bit marker;          /* a marker is in the script cache (never lost) */
byte lq;             /* a loss's quarantine: until these leases passed */
byte pend;           /* ghost: holders and revoked holders at the last
                        loss, whose commands may still run */

/* ---- the store CMD writes to, refusing a token older than it saw ---- */
byte store_tok;
byte store_who;

/* ---- environment ---- */
byte crashes = CRASHES;
byte stalls = STALLS;
byte signals = SIGNALS;
byte inflight = INFLIGHT;

/* ---- ghosts ---- */
byte running;        /* CMDs running (of parties that believe they hold) */
byte runx;           /* ... of them exclusive */
byte granted;        /* grants so far */

/* Once dl has passed, drop every holder and waiter whose lease has
 * passed and set dl to the earliest deadline left; then grant free slots
 * to the waiters in order. Every lock script starts with this. */
inline settle()
{
	if
	:: DL_PASSED ->
		/* the last holder's lease passed: its record goes */
		if
		:: (holders & expd) != 0 && (holders & ~expd) == 0 -> rec = 0
		:: else
		fi;
		holders = holders & ~expd;
		shortl = shortl & holders;
		i = 0;
		do
		:: i < qlen && (expd & B(queue[i])) ->
			for (j : i .. qlen - 2) {
				queue[j] = queue[j + 1]
			}
			qlen--; queue[qlen] = 0
		:: i < qlen && !(expd & B(queue[i])) -> i++
		:: i >= qlen -> break
		od;
		cov = holders;
#ifndef MUT_LOCK_DL_HOLDERS_ONLY
		for (i : 0 .. qlen - 1) {
			cov = cov | B(queue[i])
		}
#endif
		dlx = 0
	:: else      /* dl ahead: no lease can have passed */
	fi;
	/* whoever's lease has passed is gone: a dead holder's slot is free
	 * for the grants below, and none goes to a dead waiter */
	assert((holders & expd) == 0);
	for (i : 0 .. qlen - 1) {
		assert((expd & B(queue[i])) == 0)
	}
	/* no holder, yet the keeper's record of one whose lease runs: the
	 * holders went with part of the state (every grant path checks) */
#ifndef MUT_LOCK_GRANT_IGNORES_RECORD
	if
	:: rec && holders == 0 -> lq = lq | pend
	:: else
	fi;
#endif
	do
	:: qlen > 0 && !QUARANTINE ->
		/* the head, or (seeded bug) the first shared request when an
		 * exclusive head does not fit */
		k = 0;
#ifdef MUT_LOCK_SHARED_PAST_X
		if
		:: !(SH & B(queue[0])) && POP(holders) >= KS ->
			do
			:: k < qlen - 1 && !(SH & B(queue[k])) -> k++
			:: else -> break
			od
		:: else
		fi;
#endif
		h = queue[k];
		if
		:: (SH & B(h)) && (holders & ~SH) == 0 -> skip
#ifndef MUT_LOCK_NO_SLOT_CHECK
#ifndef MUT_LOCK_X_BESIDE_SHARED
		:: !(SH & B(h)) && POP(holders) < KS -> skip
#else
		:: !(SH & B(h)) && POP(holders & ~SH) < KS -> skip
#endif
#else
		:: !(SH & B(h)) -> skip
#endif
		:: else -> break
		fi;
		/* first come, first served: nobody waiting came before h */
		for (j : 0 .. qlen - 1) {
			assert(queue[j] == h || tick[queue[j]] > tick[h])
		}
		for (j : k .. qlen - 2) {
			queue[j] = queue[j + 1]
		}
		qlen--; queue[qlen] = 0;
		holders = holders | B(h);
		rec = 1;
#ifndef MUT_TOKEN_NO_GROW
		token++;
#else
		if
		:: granted == 0 -> token++
		:: else
		fi;
#endif
		/* fencing: every grant's token is larger than every earlier one */
		assert(token > tok[h]);
		tok[h] = token;
		cov = cov | B(h);     /* its deadline lowers dl */
		woken = woken | B(h);
		shortl = shortl | (SHORTL & B(h));
		granted++;
		/* mutual exclusion in Redis: at most KS exclusive holders,
		 * and none beside a shared one */
		assert(POP(holders & ~SH) <= KS);
		assert((holders & ~SH) == 0 || (holders & SH) == 0)
	:: else -> break
	od;
	i = 0; j = 0; h = 0; k = 0
}

proctype Party(byte p)
{
	byte i, j, h, k;
	bit lost;

	atomic {                      /* acquire: join the queue */
		/* first, the keeper: a lost one with a marker there is a
		 * loss of state (the record: settle) */
		if
		:: !keeper ->
			if
			:: marker -> lq = lq | pend
			:: else
			fi;
#ifndef MUT_LOCK_KEEPER_NO_MARKER
			marker = 1;
#endif
			keeper = 1
		:: else
		fi;
		expd = expd & ~B(p);
		queue[qlen] = p;
		qlen++;
		seq++;
		tick[p] = seq;
#ifndef MUT_LOCK_DL_NO_LOWER
		cov = cov | B(p);         /* its deadline lowers dl */
#endif
		settle()
	}
	do
	:: atomic { holders & B(p) ->
		/* the next acquire call finds it granted: 'held' renews the
		 * lease, which the party counts from this call; an entry
		 * whose lease passed is dropped first, and the call says lost */
		settle();
		woken = woken & ~B(p);
		if
		:: holders & B(p) -> expd = expd & ~B(p); shortl = shortl & ~B(p)
		:: else -> lost = 1
		fi
	   };
		if
		:: lost -> goto stop
		:: else -> break
		fi
	:: atomic { woken & B(p) -> woken = woken & ~B(p) } ->
		/* woken: a grant that counts the short lease is confirmed by
		 * one renewal (the full lease from then on), or found lost
		 * and given back; or, read early (rbarrier lock's early
		 * grant), CMD starts on the short lease and its first renewal
		 * below confirms it */
		if
		:: SHORTL & B(p) ->
			atomic {
				settle();
				if
				:: holders & B(p) ->
					expd = expd & ~B(p); shortl = shortl & ~B(p)
				:: else -> lost = 1
				fi
			};
			if
			:: lost -> goto stop
			:: else -> break
			fi
		:: SHORTL & B(p) -> skip  /* early: confirmed once CMD runs */
		:: else
		fi;
		/* without it, the element read is the grant, no call confirms it */
		if
#ifndef MUT_LOCK_WAKE_NO_CLOCK
		:: expd & B(p) ->         /* read too late: gives it back */
			atomic { settle(); expd = expd & ~B(p) }
			goto stop
		:: !(expd & B(p)) -> break
#else
		:: true -> break
#endif
		fi
	:: atomic { (shortl & B(p)) && !(expd & B(p)) ->
		/* slow to confirm: the grant's short lease passes */
		EXPIRE(p)
	   }
	:: atomic { stalls > 0 && (woken & B(p)) && !(expd & B(p)) ->
		/* stalls between the grant and its read: the lease passes */
		stalls--; EXPIRE(p)
	   }
	:: atomic {                   /* a waiter's heartbeat */
		!(holders & B(p)) && !(expd & B(p)) ->
		expd = expd & ~B(p); settle()
	   }
	:: TAKE(signals) ->           /* gives up: leave the queue or the slot */
		atomic {
			RELEASE(p);
			i = 0;
			do
			:: i < qlen && queue[i] == p ->
				for (j : i .. qlen - 2) {
					queue[j] = queue[j + 1]
				}
				qlen--; queue[qlen] = 0;
				break
			:: i < qlen && queue[i] != p -> i++
			:: i >= qlen -> break
			od;
			settle()
		}
		goto stop
	:: atomic { kicked & B(p) ->
		/* woken by 'reset', or its unread grant deleted (its next
		 * call says lost): exit 3; it renews no more, so its lease
		 * passes */
		kicked = kicked & ~B(p); EXPIRE(p)
	   } -> goto stop
	:: atomic { crashes > 0 -> crashes--; EXPIRE(p) } -> goto stop
	od;

	/* holding: CMD runs, with RBARRIER_LOCK_TOKEN */
	atomic {
		running++;
		if
		:: !(SH & B(p)) -> runx++
		:: else
		fi;
		/* mutual exclusion: at most KS exclusive commands run at once,
		 * and none beside a shared one */
		assert(runx <= KS);
		assert(runx == 0 || running == runx)
	}
	do
	:: atomic {                   /* CMD writes to the store */
		skip;
		if
		:: tok[p] >= store_tok ->
			/* fencing: no two holders' writes under one token */
			assert(tok[p] > store_tok || store_who == p);
			store_tok = tok[p];
			store_who = p
		:: else                   /* refused: a newer holder wrote */
		fi
	   }
	:: atomic {                   /* renew while CMD runs */
		skip;
		if
		:: holders & B(p) ->
			/* an early grant's first renewal confirms it: the full
			 * lease from then on */
			expd = expd & ~B(p); shortl = shortl & ~B(p)
		:: else -> lost = 1; STOPCMD(p)  /* lost the slot: stop CMD, exit 3 */
		fi
	   };
		if
		:: lost ->
			/* CMD stopped: the release confirms it (a revoked
			 * holder's ends its part of the quarantine); it renews
			 * no more, so its lease passes */
			atomic { revoked = revoked & ~B(p); EXPIRE(p); settle() }
			goto stop
		:: else
		fi
	:: atomic {                   /* CMD done: release */
		STOPCMD(p);
		RELEASE(p);
		revoked = revoked & ~B(p);    /* revoked meanwhile: confirms */
		settle()
	   }; goto stop
	:: atomic { stalls > 0 -> stalls--;
		/* cut off from Redis: the lease passes; the holder stops CMD
		 * by its own clock before it runs out */
		EXPIRE(p);
#ifndef MUT_LOCK_NO_SELF_STOP
		STOPCMD(p)
#endif
	   } ->
		/* a write it sent before may still reach the store */
		if
		:: atomic { inflight > 0 -> inflight-- } ->
			atomic {
				if
				:: tok[p] >= store_tok ->
					assert(tok[p] > store_tok || store_who == p);
					store_tok = tok[p];
					store_who = p
				:: else
				fi
			}
		:: true
		fi;
#ifdef MUT_LOCK_NO_SELF_STOP
		/* ... keeps running until the others have taken the slot */
		(holders != 0 && !(holders & B(p))) || qlen == 0;
		STOPCMD(p);
#endif
		goto stop
	:: atomic { crashes > 0 -> crashes--; EXPIRE(p); STOPCMD(p) } ->
		goto stop
	:: atomic { (shortl & B(p)) && !(expd & B(p)) ->
		/* an early grant not confirmed in time (the renewal is slow,
		 * or the runner stopped): its short lease passes on the
		 * server. The party counts that same short lease, and its
		 * watchdog has stopped CMD by then */
		EXPIRE(p);
#ifndef MUT_LOCK_SHORT_NO_CONFIRM
		STOPCMD(p)
#endif
	   } ->
#ifdef MUT_LOCK_SHORT_NO_CONFIRM
		/* seeded bug: counting the full lease, it runs CMD until its
		 * renewal finds the slot gone */
		(holders != 0 && !(holders & B(p))) || qlen == 0;
		STOPCMD(p);
#endif
		goto stop
	od;
stop:
	skip
}

/* reset --lock: revoke the holders, send the waiters away (a grant on
 * its wake list not yet read is deleted with it) */
proctype Reset()
{
	byte i, j, h, k;
	atomic {
		revoked = revoked | (holders & ~expd);
		kicked = kicked | (woken & holders);
#ifdef MUT_LOCK_RESET_FREES_RECORD
		rec = 0;
#endif
		woken = woken & ~holders;
		holders = 0;
		for (i : 0 .. qlen - 1) {
			kicked = kicked | B(queue[i]);
			queue[i] = 0
		}
		qlen = 0;
		cov = 0;
		dlx = 1;
		settle()
	}
}

/* Redis loses the lock's state: FLUSHALL (the keeper with it), or an
 * eviction of the name's keys (the keeper and its record stay). Waiters
 * and unread grants are gone: their next call says so (exit 1). */
proctype Loss()
{
	byte i, j, h, k;
	atomic {
		pend = (holders | revoked) & ~expd;
		if
		:: keeper = 0; rec = 0
		:: skip               /* the name's keys; the record stays */
		:: holders != 0 ->    /* the holders alone (one key evicted) */
			holders = 0; shortl = 0;
			goto done
		fi;
		kicked = kicked | woken | holders;
		woken = 0;
		holders = 0;
		revoked = 0;
		shortl = 0;
		for (i : 0 .. qlen - 1) {
			kicked = kicked | B(queue[i]);
			queue[i] = 0
		}
		qlen = 0;
		cov = 0;
		dlx = 1;
		i = 0;
done:		skip
	}
}

proctype Dup()
{
end:	/* it may come while id 0 is not held: then it never asks */
	atomic {
		(holders & B(0)) && !(expd & B(0)) ->
#ifndef MUT_LOCK_DUP_JOINS
		skip                      /* busy: refused (exit 2) */
#else
		running++; runx++;        /* runs as the holder of its id */
		assert(runx <= KS);
		assert(runx == 0 || running == runx)
#endif
	}
}

init
{
	byte n;
	atomic {
		for (n : 0 .. P - 1) {
			run Party(n)
		}
#if RESETS > 0
		run Reset()    /* one reset at any moment */
#endif
#if LOSSES > 0
		run Loss()     /* one loss of state at any moment */
#endif
#ifdef DUP
		run Dup()
#endif
	}
}
