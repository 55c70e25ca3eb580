/**
 * Upstash-Retry-Delay: an arithmetic expression in the variable `retried` (retries made so far,
 * 0 before the first retry) that gives the delay in milliseconds, e.g. `pow(2, retried) * 1000`.
 * Parsed by a small recursive-descent parser into a tree, never evaluated as code.
 *
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/' | '%') unary)*
 *   unary   := ('-' | '+') unary | primary
 *   primary := number | 'retried' | name '(' expr (',' expr)* ')' | '(' expr ')'
 */

export class InvalidRetryDelayError extends Error {
  readonly code = 'INVALID_RETRY_DELAY';
  constructor(
    readonly expression: string,
    reason: string,
  ) {
    super(`Upstash-Retry-Delay ${JSON.stringify(expression)} is not a valid expression: ${reason}`);
    this.name = 'InvalidRetryDelayError';
  }
}

export const MAX_RETRY_DELAY_EXPRESSION_LENGTH = 256;

type Node =
  | { kind: 'number'; value: number }
  | { kind: 'retried' }
  | { kind: 'negate'; operand: Node }
  | { kind: 'binary'; operator: '+' | '-' | '*' | '/' | '%'; left: Node; right: Node }
  | { kind: 'call'; name: FunctionName; args: Node[] };

const FUNCTIONS = {
  pow: { arity: 2, apply: (a: number[]) => Math.pow(a[0]!, a[1]!) },
  sqrt: { arity: 1, apply: (a: number[]) => Math.sqrt(a[0]!) },
  abs: { arity: 1, apply: (a: number[]) => Math.abs(a[0]!) },
  exp: { arity: 1, apply: (a: number[]) => Math.exp(a[0]!) },
  floor: { arity: 1, apply: (a: number[]) => Math.floor(a[0]!) },
  ceil: { arity: 1, apply: (a: number[]) => Math.ceil(a[0]!) },
  round: { arity: 1, apply: (a: number[]) => Math.round(a[0]!) },
  min: { arity: 'variadic', apply: (a: number[]) => Math.min(...a) },
  max: { arity: 'variadic', apply: (a: number[]) => Math.max(...a) },
} as const;
type FunctionName = keyof typeof FUNCTIONS;

function isFunctionName(name: string): name is FunctionName {
  return Object.hasOwn(FUNCTIONS, name);
}

type Token =
  { type: 'number'; value: number } | { type: 'name'; value: string } | { type: 'symbol'; value: string };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s*(?:(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|([A-Za-z_]\w*)|([-+*/%(),]))/y;
  let index = 0;
  while (index < text.length) {
    if (/^\s*$/.test(text.slice(index))) break;
    pattern.lastIndex = index;
    const match = pattern.exec(text);
    if (!match) throw new InvalidRetryDelayError(text, `unexpected character at ${index + 1}`);
    index = pattern.lastIndex;
    if (match[1] !== undefined) tokens.push({ type: 'number', value: Number(match[1]) });
    else if (match[2] !== undefined) tokens.push({ type: 'name', value: match[2] });
    else tokens.push({ type: 'symbol', value: match[3]! });
  }
  return tokens;
}

class Parser {
  private position = 0;
  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
  ) {}

  parse(): Node {
    if (this.tokens.length === 0) throw this.fail('it is empty');
    const node = this.expression();
    if (this.position < this.tokens.length) throw this.fail('unexpected text after the expression');
    return node;
  }

  private expression(): Node {
    let node = this.term();
    for (let op = this.symbol('+', '-'); op; op = this.symbol('+', '-')) {
      node = { kind: 'binary', operator: op as '+' | '-', left: node, right: this.term() };
    }
    return node;
  }

  private term(): Node {
    let node = this.unary();
    for (let op = this.symbol('*', '/', '%'); op; op = this.symbol('*', '/', '%')) {
      node = { kind: 'binary', operator: op as '*' | '/' | '%', left: node, right: this.unary() };
    }
    return node;
  }

  private unary(): Node {
    const sign = this.symbol('-', '+');
    if (sign === '-') return { kind: 'negate', operand: this.unary() };
    if (sign === '+') return this.unary();
    return this.primary();
  }

  private primary(): Node {
    const token = this.tokens[this.position++];
    if (!token) throw this.fail('it ends too early');
    if (token.type === 'number') return { kind: 'number', value: token.value };
    if (token.type === 'symbol' && token.value === '(') {
      const inner = this.expression();
      this.expect(')');
      return inner;
    }
    if (token.type === 'name') {
      if (token.value === 'retried') return { kind: 'retried' };
      if (!isFunctionName(token.value)) throw this.fail(`unknown name ${token.value}`);
      return this.call(token.value);
    }
    throw this.fail(`unexpected ${token.value}`);
  }

  private call(name: FunctionName): Node {
    this.expect('(');
    const args = [this.expression()];
    while (this.symbol(',')) args.push(this.expression());
    this.expect(')');
    const arity = FUNCTIONS[name].arity;
    if (arity !== 'variadic' && args.length !== arity) throw this.fail(`${name} takes ${arity} argument(s)`);
    return { kind: 'call', name, args };
  }

  private symbol(...symbols: string[]): string | undefined {
    const token = this.tokens[this.position];
    if (token?.type === 'symbol' && symbols.includes(token.value)) {
      this.position += 1;
      return token.value;
    }
    return undefined;
  }

  private expect(symbol: string): void {
    if (!this.symbol(symbol)) throw this.fail(`expected ${symbol}`);
  }

  private fail(reason: string): InvalidRetryDelayError {
    return new InvalidRetryDelayError(this.text, reason);
  }
}

function evaluate(node: Node, retried: number): number {
  switch (node.kind) {
    case 'number':
      return node.value;
    case 'retried':
      return retried;
    case 'negate':
      return -evaluate(node.operand, retried);
    case 'call':
      return FUNCTIONS[node.name].apply(node.args.map((arg) => evaluate(arg, retried)));
    case 'binary': {
      const left = evaluate(node.left, retried);
      const right = evaluate(node.right, retried);
      if (node.operator === '+') return left + right;
      if (node.operator === '-') return left - right;
      if (node.operator === '*') return left * right;
      if (node.operator === '/') return left / right;
      return left % right;
    }
  }
}

export interface RetryDelayExpression {
  readonly source: string;
  /** The delay in milliseconds for the retry after `retried` retries; may be NaN or negative, callers clamp. */
  evaluate(retried: number): number;
}

/** Parses an Upstash-Retry-Delay value; throws InvalidRetryDelayError. */
export function parseRetryDelayExpression(source: string): RetryDelayExpression {
  if (source.length > MAX_RETRY_DELAY_EXPRESSION_LENGTH) {
    throw new InvalidRetryDelayError(
      source.slice(0, 32),
      `longer than ${MAX_RETRY_DELAY_EXPRESSION_LENGTH} characters`,
    );
  }
  const tree = new Parser(source, tokenize(source)).parse();
  return { source, evaluate: (retried) => evaluate(tree, retried) };
}
