// SPDX-License-Identifier: MIT
/*
 * The session's command line (session.h): the table of commands, a line
 * into a command and its modifiers, help, completion, and the input loop
 * (readline on a terminal, a plain line reader otherwise).
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "session.h"
#include "session_int.h"
#include "signals.h"

#define SESS_PROMPT "(btrace) "
#define SESS_HISTORY_MAX 1000
#define SESS_MAX_ARGS 16
static int do_help(struct bt_session *s, int argc, char **argv, int mods);

static const struct sess_cmd commands[] = {
	{ "last", do_last,
	  "last[/d][/j] [N | -A,-B]\n"
	  "  the last N branches of the current thread, as btrace run shows\n"
	  "  them (default: as many as at the stop); -A,-B shows the window\n"
	  "  from the A-th to the B-th newest; /d adds the code of each\n"
	  "  branch's block, /j (or --json) prints a JSON document" },
	{ "insn", do_insn,
	  "insn[/j] [N]\n"
	  "  the last N instructions (default 32)" },
	{ "calls", do_calls,
	  "calls[/j] [N | -A,-B]\n"
	  "  the function-call history, indented by call depth (default:\n"
	  "  the last segments, as many as branches at the stop)" },
	{ "threads", do_threads,
	  "threads[/j]\n  the traced threads; * is current" },
	{ "thread", do_thread, "thread [TID]\n  show or switch the current thread" },
	{ "continue", do_continue,
	  "continue\n"
	  "  trace until the next stop; Ctrl-C stops the target" },
	{ "break", do_break,
	  "break SYMBOL|ADDR|FILE:LINE\n  stop when that code is reached" },
	{ "delete", do_delete, "delete [N...]\n  delete breakpoints (all if none)" },
	{ "info", do_info,
	  "info[/j]\n  backend, buffer size and fill, records lost, stats" },
	{ "save", do_save,
	  "save FILE\n  write the trace to FILE (mode 0600) for btrace show" },
	{ "debug-dir", do_debug_dir,
	  "debug-dir [DIR]\n"
	  "  show or set where separate debug files are looked for (gdb's\n"
	  "  debug-file-directory; ':' between several); symbols reload" },
	{ "detach", do_detach,
	  "detach\n  stop tracing, leave the process running, exit" },
	{ "kill", do_kill, "kill\n  kill the process and exit" },
	{ "quit", do_quit,
	  "quit\n  exit: detach if attached, kill if launched" },
	{ "help", do_help, "help [COMMAND]\n  this help, or a command's" },
	{ "c", do_continue, NULL },
	{ "b", do_break, NULL },
	{ "q", do_quit, NULL },
	{ "exit", do_quit, NULL },
};

/* Exact name, else a unique prefix among the documented commands. */
static const struct sess_cmd *cmd_find(const char *name)
{
	const struct sess_cmd *found = NULL;
	size_t i, len = strlen(name);

	for (i = 0; i < BT_ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	for (i = 0; i < BT_ARRAY_SIZE(commands); i++) {
		if (!commands[i].help || strncmp(commands[i].name, name, len))
			continue;
		if (found)
			return NULL;
		found = &commands[i];
	}
	return found;
}

static int do_help(struct bt_session *s, int argc, char **argv, int mods)
{
	const struct sess_cmd *c;
	size_t i;

	if (argc > 1) {
		c = cmd_find(argv[1]);
		if (!c) {
			fprintf(stderr, "btrace: no command '%s'\n", argv[1]);
			return -1;
		}
		for (i = 0; !c->help; i++) /* an alias: show its command */
			if (commands[i].fn == c->fn && commands[i].help)
				c = &commands[i];
		sess_note(s, "%s\n", c->help);
		return 0;
	}
	sess_note(s, "commands (a unique prefix will do; c, b, q also work;\n"
		  "/j or --json after a command prints JSON):\n");
	for (i = 0; i < BT_ARRAY_SIZE(commands); i++) {
		const char *h = commands[i].help, *nl;

		if (!h)
			continue;
		nl = strchr(h, '\n');
		sess_note(s, "  %-28.*s %s\n", (int)(nl - h), h, nl + 3);
	}
	return 0;
}

static int parse_mods(const char *m)
{
	int mods = 0;

	for (; *m; m++) {
		if (*m == 's')
			mods |= MOD_SRC;
		else if (*m == 'd')
			mods |= MOD_DIS;
		else if (*m == 'j')
			mods |= MOD_JSON;
		else if (*m != '/')
			return -1;
	}
	return mods;
}

/* Run one command line.  Returns 0, or -1 if the command failed. */
int sess_exec(struct bt_session *s, char *line)
{
	char *argv[SESS_MAX_ARGS + 1], *p, *slash;
	const struct sess_cmd *c;
	int argc = 0, mods = 0, m;

	for (p = strtok(line, " \t\r\n"); p; p = strtok(NULL, " \t\r\n")) {
		if (argc && p[0] == '/' && (m = parse_mods(p)) >= 0) {
			mods |= m;
			continue;
		}
		if (argc && !strcmp(p, "--json")) {
			mods |= MOD_JSON;
			continue;
		}
		if (argc == SESS_MAX_ARGS) {
			fprintf(stderr, "btrace: too many arguments\n");
			return -1;
		}
		argv[argc++] = p;
	}
	argv[argc] = NULL;
	if (!argc || argv[0][0] == '#')
		return 0;
	slash = strchr(argv[0], '/');
	if (slash) {
		m = parse_mods(slash);
		if (m < 0) {
			fprintf(stderr, "btrace: unknown modifier '%s'\n",
				slash);
			return -1;
		}
		mods |= m;
		*slash = '\0';
	}
	c = cmd_find(argv[0]);
	if (!c) {
		fprintf(stderr, "btrace: unknown command '%s'; try 'help'\n",
			argv[0]);
		return -1;
	}
	m = c->fn(s, argc, argv, mods);
	fflush(s->out);
	fflush(stdout);
	return m;
}

/* ---- input ---- */

static char **sym_names;	/* completion candidates, sorted */
static size_t sym_count;
static const char *const *cmpl_words;

static int sym_collect(const char *name, uint64_t addr, void *ctx)
{
	char **n;

	if (!name || !name[0])
		return 0;
	if (sym_count % 1024 == 0) {
		n = realloc(sym_names, (sym_count + 1024) * sizeof(*n));
		if (!n)
			return 1;
		sym_names = n;
	}
	sym_names[sym_count] = strdup(name);
	if (sym_names[sym_count])
		sym_count++;
	return 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sym_names_load(struct bt_session *s)
{
	struct bt_symtab *st = sess_symtab(s);
	size_t i, j;

	if (sym_names || !st)
		return;
	bt_symtab_foreach(st, sym_collect, NULL);
	if (!sym_count)
		return;
	qsort(sym_names, sym_count, sizeof(*sym_names), str_cmp);
	for (i = j = 1; i < sym_count; i++) {
		if (!strcmp(sym_names[i], sym_names[j - 1]))
			free(sym_names[i]);
		else
			sym_names[j++] = sym_names[i];
	}
	sym_count = j;
}

void sym_names_free(void)
{
	size_t i;

	for (i = 0; i < sym_count; i++)
		free(sym_names[i]);
	free(sym_names);
	sym_names = NULL;
	sym_count = 0;
}

static char *cmd_generator(const char *text, int state)
{
	static size_t i;
	size_t len = strlen(text);

	if (!state)
		i = 0;
	while (i < BT_ARRAY_SIZE(commands)) {
		const struct sess_cmd *c = &commands[i++];

		if (c->help && !strncmp(c->name, text, len))
			return strdup(c->name);
	}
	return NULL;
}

static char *sym_generator(const char *text, int state)
{
	static size_t i;
	size_t len = strlen(text);

	if (!state) {
		size_t lo = 0, hi = sym_count;

		while (lo < hi) {	/* the first name >= text */
			size_t mid = (lo + hi) / 2;

			if (strcmp(sym_names[mid], text) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		i = lo;
	}
	if (i < sym_count && !strncmp(sym_names[i], text, len))
		return strdup(sym_names[i++]);
	return NULL;
}

static char *word_generator(const char *text, int state)
{
	static size_t i;
	size_t len = strlen(text);

	if (!state)
		i = 0;
	for (; cmpl_words && cmpl_words[i]; i++)
		if (!strncmp(cmpl_words[i], text, len))
			return strdup(cmpl_words[i++]);
	return NULL;
}

static struct bt_session *cmpl_session;

static char **sess_complete(const char *text, int start, int end)
{
	static char tidbuf[64][16];
	static const char *tidwords[65];
	const struct sess_cmd *c;
	char first[32];
	pid_t tids[64];
	size_t n, i;
	int k = 0;

	rl_attempted_completion_over = 1;
	while (k < start && isspace((unsigned char)rl_line_buffer[k]))
		k++;
	if (k == start)
		return rl_completion_matches(text, cmd_generator);
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(rl_line_buffer + k,
							     " \t/"),
		 rl_line_buffer + k);
	c = cmd_find(first);
	if (c && c->fn == do_help)
		return rl_completion_matches(text, cmd_generator);
	if (c && c->fn == do_thread && cmpl_session->state != SESS_GONE) {
		n = bt_target_threads(cmpl_session->target, tids, 64);
		for (i = 0; i < n && i < 64; i++) {
			snprintf(tidbuf[i], sizeof(tidbuf[i]), "%d", tids[i]);
			tidwords[i] = tidbuf[i];
		}
		tidwords[i] = NULL;
		cmpl_words = tidwords;
		return rl_completion_matches(text, word_generator);
	}
	if (c && c->fn == do_break) {
		sym_names_load(cmpl_session);
		return rl_completion_matches(text, sym_generator);
	}
	return NULL;
}

static char *rl_result;
static int rl_have;

static void rl_on_line(char *line)
{
	rl_result = line;
	rl_have = 1;
	rl_callback_handler_remove();
}

/* Discard the line being edited after Ctrl-C, as shells do. */
static void rl_cancel(void)
{
	rl_free_line_state();
	rl_crlf();
	rl_replace_line("", 0);
	rl_on_new_line();
	rl_redisplay();
}

/*
 * One line from readline; NULL at end of input or when a signal asked to
 * quit.  The caller frees the line.
 */
static char *read_tty(void)
{
	sigset_t old;
	fd_set fds;
	int r;

	rl_have = 0;
	rl_callback_handler_install(SESS_PROMPT, rl_on_line);
	while (!rl_have) {
		cmd_block_signals(&old);
		if (sig_quit) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			rl_callback_handler_remove();
			printf("\n");
			return NULL;
		}
		if (sig_cancel) {
			sig_cancel = 0;
			sigprocmask(SIG_SETMASK, &old, NULL);
			rl_cancel();
			continue;
		}
		FD_ZERO(&fds);
		FD_SET(STDIN_FILENO, &fds);
		sig_prompt = 1;
		r = pselect(STDIN_FILENO + 1, &fds, NULL, NULL, NULL, &old);
		sig_prompt = 0;
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (r > 0)
			rl_callback_read_char();
		else if (r < 0 && errno != EINTR)
			break;
	}
	if (!rl_have) {
		rl_callback_handler_remove();
		return NULL;
	}
	if (!rl_result)
		printf("\n");	/* Ctrl-D */
	return rl_result;
}

/* One line from a non-terminal stdin, without stdio's read-ahead. */
static char *read_plain(void)
{
	static char buf[4096];
	static size_t len;
	static int eof;
	sigset_t old;
	char *nl, *line;
	fd_set fds;
	ssize_t n;
	int r;

	for (;;) {
		nl = memchr(buf, '\n', len);
		if (nl || (eof && len) || len == sizeof(buf)) {
			size_t l = nl ? (size_t)(nl - buf) : len;

			line = strndup(buf, l);
			l += nl ? 1 : 0;
			memmove(buf, buf + l, len - l);
			len -= l;
			return line;
		}
		if (eof)
			return NULL;
		cmd_block_signals(&old);
		FD_ZERO(&fds);
		FD_SET(STDIN_FILENO, &fds);
		r = sig_quit ? -1 : pselect(STDIN_FILENO + 1, &fds, NULL, NULL,
					    NULL, &old);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (sig_quit || (r < 0 && errno != EINTR))
			return NULL;
		if (r <= 0)
			continue;
		n = read(STDIN_FILENO, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			eof = 1;
		else
			len += n;
	}
}

static char *history_path(void)
{
	const char *home = getenv("HOME");
	char *path;

	if (!home || !home[0])
		return NULL;
	if (asprintf(&path, "%s/.btrace_history", home) < 0)
		return NULL;
	return path;
}

void sess_loop(struct bt_session *s)
{
	char *hist = NULL, *line;

	if (s->interactive) {
		hist = history_path();
		using_history();
		stifle_history(SESS_HISTORY_MAX);
		if (hist)
			read_history(hist);
		rl_catch_signals = 0;
		rl_readline_name = "btrace";
		rl_attempted_completion_function = sess_complete;
		cmpl_session = s;
	}
	while (!s->done && !sig_quit) {
		fflush(stdout);
		line = s->interactive ? read_tty() : read_plain();
		if (!line)
			break;
		if (s->interactive && line[strspn(line, " \t")])
			add_history(line);
		if (sess_exec(s, line))
			s->failed = 1;
		free(line);
	}
	if (hist && write_history(hist) != 0)
		fprintf(stderr, "btrace: cannot write %s\n", hist);
	free(hist);
	sym_names_free();
}
