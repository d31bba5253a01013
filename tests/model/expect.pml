/*
 * An --expect list stored in parts (lua/expect-store-1.lua,
 * lua/includes/expect.lua, lib/rb_barrier_expect.c). Storers send the
 * parts the server asks for; each call is one atomic step: it adds its part
 * to the fill set and records it, and the call that finds every part
 * recorded renames the fill set to the list's set, which arrivals read. A
 * meddler sends any part at any time (a second party storing the same list
 * from the start, a resend). The fill set and the record of parts expire
 * apart (a server may drop one before the other), and the list's set may
 * expire too (the next arrival asks for it again).
 *
 * What is checked: an arrival never meets a list in part (the set it reads
 * holds every part, so an id on the list is never refused), and every
 * storer ends once it is the only one at work and nothing expires.
 *
 *   P        parts (2..3)
 *   STORERS  parties storing the list (1..2)
 *   EXPIRES  expiries of the server's keys, at most
 *   TERM     check that the storers end (with EXPIRES=0)
 * Seeded bugs: MUT_XS_COUNT_CALLS (the list is whole after P calls, not
 *   after P distinct parts: two storers sending part 1 publish it without
 *   part 2), MUT_XS_READ_FILL (arrivals read the fill set: no rename),
 *   MUT_XS_KEEP_RECORD (a record of parts whose fill set expired is kept:
 *   the last part then publishes a set of one part), MUT_XS_ASK_SAME (the
 *   server asks again for the part it got, not the first one missing: a
 *   storer never ends).
 */
#ifndef P
#define P 2
#endif
#ifndef STORERS
#define STORERS 2
#endif
#ifndef EXPIRES
#define EXPIRES 1
#endif
#define ALL ((1 << P) - 1)

byte fill;       /* rb:b:{NAME}:x:<digest>:n: the parts in it (bits) */
byte done;       /* ...:p, the record: the parts stored (bits) */
#ifdef MUT_XS_COUNT_CALLS
byte calls;      /* the mutant's record: how many calls stored a part */
#endif
byte list;       /* rb:b:{NAME}:x:<digest>: the parts in it; 0 absent */
byte expired;
byte ended;

/* One expect-store call of part (1..P); ask: 0 stored, else the part
 * the server asks for next. */
inline store(part, ask)
{
	atomic {
		if
		:: list != 0 -> ask = 0
		:: else ->
#ifndef MUT_XS_KEEP_RECORD
			if
			:: fill == 0 -> done = 0
#ifdef MUT_XS_COUNT_CALLS
				; calls = 0
#endif
			:: else
			fi;
#endif
			if
			:: (done & (1 << (part - 1))) == 0 ->
				fill = fill | (1 << (part - 1));
				done = done | (1 << (part - 1))
#ifdef MUT_XS_COUNT_CALLS
			:: else -> skip
			fi;
			calls++;
			if
			:: calls >= P ->
#else
			:: else
			fi;
			if
			:: done == ALL ->
#endif
				list = fill;          /* RENAME */
				fill = 0;
				done = 0;
#ifdef MUT_XS_COUNT_CALLS
				calls = 0;
#endif
				ask = 0
			:: else ->
#ifdef MUT_XS_ASK_SAME
				ask = part;
#else
				ask = 1;             /* the first part missing */
				do
				:: ask <= P && (done & (1 << (ask - 1))) != 0 -> ask++
				:: else -> break
				od;
#endif
#ifdef MUT_XS_COUNT_CALLS
				if
				:: ask > P -> ask = 1  /* all recorded, not whole */
				:: else
				fi
#endif
			fi
		fi
	}
}

proctype Storer()
{
	byte next = 1;
	do
	:: next != 0 -> store(next, next)
	:: else -> break
	od;
	ended++
}

/* A second copy of the work, out of turn: any part, any time. */
proctype Meddler()
{
	byte i, next;
	do
	:: i = 1; do :: i < P -> i++ :: break od;
	   store(i, next)
	:: break
	od
}

/* An arrival whose id is in part k: the set it reads must hold that part
 * (else the id, which is on the list, would be refused). */
proctype Arrival()
{
	byte k = 1;
	do :: k < P -> k++ :: break od;
	do
	:: atomic {
#ifdef MUT_XS_READ_FILL
		(fill != 0 || list != 0) ->
		assert(((fill | list) & (1 << (k - 1))) != 0 || list == ALL)
#else
		list != 0 ->
		assert((list & (1 << (k - 1))) != 0)
#endif
	   }
	:: break
	od
}

proctype Expiry()
{
	do
	:: expired < EXPIRES -> atomic { fill = 0; expired++ }
	:: expired < EXPIRES -> atomic { done = 0;
#ifdef MUT_XS_COUNT_CALLS
		calls = 0;
#endif
		expired++ }
	:: expired < EXPIRES -> atomic { list = 0; expired++ }
	:: break
	od
}

init
{
	byte s;
	atomic {
		for (s : 1 .. STORERS) {
			run Storer()
		}
		run Meddler();
#ifndef TERM
		run Arrival();
#endif
#if EXPIRES > 0
		run Expiry()
#endif
	}
}

#ifdef TERM
ltl stores { <> (ended == STORERS) }
#endif
