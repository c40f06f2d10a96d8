// SPDX-License-Identifier: MIT
/*
 * A switch dense enough for gcc -O0 to compile it to a jump table (an
 * indirect jump), dispatching a small bytecode; the last operation divides
 * by zero (SIGFPE).
 */
enum op { OP_PUSH1, OP_ADD, OP_SUB, OP_MUL, OP_DUP, OP_SWAP, OP_NEG, OP_DIV,
	  OP_HALT };

static int stack[16];
static int sp;

static int execute(const unsigned char *code)
{
	int a, b;

	for (;; code++) {
		switch (*code) {
		case OP_PUSH1: stack[sp++] = 1; break;
		case OP_ADD: sp--; stack[sp - 1] += stack[sp]; break;
		case OP_SUB: sp--; stack[sp - 1] -= stack[sp]; break;
		case OP_MUL: sp--; stack[sp - 1] *= stack[sp]; break;
		case OP_DUP: stack[sp] = stack[sp - 1]; sp++; break;
		case OP_SWAP:
			a = stack[sp - 1];
			stack[sp - 1] = stack[sp - 2];
			stack[sp - 2] = a;
			break;
		case OP_NEG: stack[sp - 1] = -stack[sp - 1]; break;
		case OP_DIV:
			sp--;
			b = stack[sp];
			stack[sp - 1] /= b;	/* b is 0 here: SIGFPE */
			break;
		case OP_HALT: return stack[sp - 1];
		}
	}
}

int main(void)
{
	/* 1 1 + dup - : 0 ; then 1 swap / : 1 / 0 */
	static const unsigned char code[] = {
		OP_PUSH1, OP_PUSH1, OP_ADD, OP_DUP, OP_SUB, OP_PUSH1, OP_SWAP,
		OP_DIV, OP_HALT,
	};

	return execute(code);
}
