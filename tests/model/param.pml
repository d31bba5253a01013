/*
 * A parameter's value that shells wait for (`rbarrier get --until-set`,
 * lib/rb_param.c rb_param_get_until; `rbarrier set`, lua/set-1.lua). Each
 * command and script is one atomic step. A waiter GETs the value; when it
 * was never set it blocks on the wake list (a rotating BLMOVE: the element
 * stays), slice after slice, and prints what it finds there. set writes
 * the value and replaces the wake list with it in one script; train makes
 * the value without the list (a value there at the GET counts; one made
 * while a waiter blocks does not wake it).
 *
 *   W      waiters (1..3; 2 with TERM: pan's fairness takes 5 processes)
 *   TRAIN  a train may make the value first
 *   TERM   check termination: every waiter ends once set has run
 * Seeded bugs: MUT_SET_NO_WAKE (set writes the value only: a waiter that
 *   blocked before it sleeps on), MUT_WAKE_POPS (the waiter pops the
 *   element instead of rotating it: the other waiters sleep on).
 */
#ifndef W
#define W 2
#endif
#ifndef TRAIN
#define TRAIN 1
#endif

byte value;          /* rb:p:{P}: 0 = never set */
byte wake;           /* rb:p:{P}:set: its one element, 0 = empty */
byte ended;          /* waiters done */
byte got[W];         /* what each waiter printed */
byte setv;           /* the value set went out */

proctype Waiter(byte w)
{
	byte v;
	atomic { v = value };                       /* GET */
	do
	:: v != 0 -> break
	:: else ->
		atomic {                                /* one blocking slice */
			if
			:: wake != 0 -> v = wake
#ifdef MUT_WAKE_POPS
				; wake = 0
#endif
			:: else                             /* the slice ran out */
			fi
		}
	od;
	/* what it prints is a value set, or one train made before it asked */
	assert(v == 1 || v == 2);
	got[w] = v;
	ended++
}

proctype Setter()
{
	atomic {
		value = 1;                              /* set-1.lua */
#ifndef MUT_SET_NO_WAKE
		wake = 1;
#endif
		setv = 1
	}
}

proctype Trainer()
{
	atomic {                                    /* train on a fresh value */
		if
		:: value == 0 -> value = 2
		:: else                                 /* adds to a set one */
		fi
	}
}

init
{
	byte i;
	atomic {
		for (i : 0 .. W - 1) {
			run Waiter(i)
		}
		run Setter();
#if TRAIN
		run Trainer()
#endif
	}
}

#ifdef TERM
/* every waiter ends (set runs, under weak fairness) */
ltl term { <> (ended == W) }
#endif
