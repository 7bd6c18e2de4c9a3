/**
 * The comment parser, as tables: commands in their casings and spellings,
 * verify's phase ids, commands hidden in quotes, code and HTML comments,
 * unknown commands, free text, and the help reply built from the same table.
 */
import { COMMANDS, helpText, parseComment, visibleText, type CommandName, type Parsed } from "../../src/human/parse.js";
import type { CommandName as EventCommandName } from "../../src/machine/events.js";

// The parser's command names and the state machine's are the same set.
const toEvent: EventCommandName = "" as CommandName;
const fromEvent: CommandName = "" as EventCommandName;
void toEvent;
void fromEvent;

const NOTE_COMMANDS = COMMANDS.filter((c) => c.takes === "note").map((c) => c.name);

const text = (body: string, isEmpty = false): Parsed => ({ kind: "text", body: body.trim(), isEmpty });

describe("every command without arguments, in several casings and spacings", () => {
  const shapes: Array<[string, (name: string) => string]> = [
    ["lower case", (n) => `orchestra ${n}`],
    ["upper case", (n) => `ORCHESTRA ${n.toUpperCase()}`],
    ["mixed case", (n) => `Orchestra ${n[0]!.toUpperCase()}${n.slice(1)}`],
    ["leading and trailing spaces", (n) => `   orchestra ${n}   `],
    ["several spaces and a tab between", (n) => `orchestra  \t ${n}`],
    ["leading slash", (n) => `/orchestra ${n}`],
    ["leading slash, upper case", (n) => `/ORCHESTRA ${n.toUpperCase()}`],
    ["blank lines first", (n) => `\n\n  \norchestra ${n}`],
    ["followed by more lines", (n) => `orchestra ${n}\n\nsome explanation below`],
    ["trailing punctuation on the word", (n) => `orchestra ${n}!`],
    ["CRLF line endings", (n) => `\r\n\r\norchestra ${n}\r\nmore\r\n`],
    ["after an HTML comment", (n) => `<!-- template: say what you want -->\norchestra ${n}`],
    ["with an HTML comment on the same line", (n) => `orchestra ${n} <!-- hidden -->`],
    ["after a quote and a blank line", (n) => `> did the run fail?\n\norchestra ${n}`],
    ["after a closed code fence", (n) => "```\nlog output\n```\norchestra " + n],
  ];
  const cases = NOTE_COMMANDS.flatMap((name) => shapes.map(([shape, make]) => [name, shape, make(name)] as const));
  test.each(cases)("%s: %s", (name, _shape, body) => {
    expect(parseComment(body)).toEqual({ kind: "command", command: name });
  });
});

describe("trailing text after a command without arguments is a note", () => {
  test.each(
    NOTE_COMMANDS.flatMap(
      (name) =>
        [
          [`orchestra ${name} please`, name, "please"],
          [`/Orchestra ${name.toUpperCase()}   the flaky test is fixed now  `, name, "the flaky test is fixed now"],
          [`orchestra ${name}, please`, name, "please"],
          [`orchestra ${name} see \`foo.ts\` <!-- x --> line 3\r\nmore`, name, "see `foo.ts`  line 3"],
        ] as const,
    ),
  )("%j", (body, name, note) => {
    expect(parseComment(body)).toEqual({ kind: "command", command: name, note });
  });
});

describe("verify and its phase id", () => {
  test.each([
    ["orchestra verify phase-2", "phase-2"],
    ["ORCHESTRA VERIFY Phase-2", "Phase-2"],
    ["/orchestra verify p", "p"],
    ["  orchestra   verify   1.2_three-4  ", "1.2_three-4"],
    ["orchestra verify: phase-2", "phase-2"],
    ["orchestra verify a" + "b".repeat(63), "a" + "b".repeat(63)],
    ["orchestra verify phase-2\r\n\r\nlooks good to me", "phase-2"],
  ])("%j → phase %j", (body, phase) => {
    expect(parseComment(body)).toEqual({ kind: "command", command: "verify", phase });
  });

  test.each([
    ["missing", "orchestra verify"],
    ["missing, with spaces", "orchestra verify    "],
    ["missing, slash", "/orchestra verify\nphase-2"],
    ["too long (65 characters)", "orchestra verify a" + "b".repeat(64)],
    ["starts with a dash", "orchestra verify -phase"],
    ["starts with a dot", "orchestra verify .phase"],
    ["contains a space", "orchestra verify phase 2"],
    ["trailing words", "orchestra verify phase-2 looks good"],
    ["contains a slash", "orchestra verify phase/2"],
    ["in backticks", "orchestra verify `phase-2`"],
    ["non-ASCII", "orchestra verify phäse"],
  ])("%s → malformed", (_name, body) => {
    const parsed = parseComment(body);
    expect(parsed).toMatchObject({ kind: "malformed", command: "verify" });
    const message = (parsed as Extract<Parsed, { kind: "malformed" }>).message;
    expect(message).toContain("`orchestra verify <phase-id>`");
    expect(message).toContain("64 characters");
    expect(message).toContain("`orchestra verify phase-2`");
  });

  test("a huge bad phase id is shortened in the message", () => {
    const parsed = parseComment("orchestra verify x/" + "y".repeat(10_000));
    expect(parsed.kind).toBe("malformed");
    expect((parsed as Extract<Parsed, { kind: "malformed" }>).message.length).toBeLessThan(400);
  });
});

describe("commands that a reader does not see as the author's own words are not commands", () => {
  test.each([
    ["a quote", "> orchestra retry"],
    ["an indented quote", "   > orchestra retry"],
    ["a nested quote", "> > orchestra cancel"],
    ["a quote without a space", ">orchestra hold"],
    ["a quote, CRLF", "> orchestra retry\r\n> \r\n"],
    ["a quote's lazy continuation", "> can you do it?\norchestra retry"],
    ["a ``` fence", "```\norchestra retry\n```"],
    ["a ``` fence with a language", "```bash\norchestra cancel\n```"],
    ["a ``` fence, indented up to 3 spaces", "   ```\norchestra cancel\n   ```"],
    ["a longer ```` fence holding ```", "````\n```\norchestra retry\n````"],
    ["an unterminated ``` fence", "```\norchestra retry\nand everything after"],
    ["an unterminated ``` fence, CRLF", "```yaml\r\norchestra retry\r\n"],
    ["a ~~~ fence", "~~~\norchestra hold\n~~~"],
    ["a ~~~ fence with a language", "~~~ text\norchestra hold\n~~~"],
    ["a ~~~ fence not closed by ```", "~~~\n```\norchestra hold"],
    ["indented code at the start", "    orchestra retry"],
    ["indented code with a tab", "\torchestra retry"],
    ["indented code with two spaces and a tab", "  \torchestra retry"],
    ["indented code after blank lines", "\n\n    orchestra retry\n"],
    ["indented code after an HTML comment line", "<!-- note -->\n    orchestra retry"],
    ["an HTML comment", "<!-- orchestra retry -->"],
    ["a multi-line HTML comment", "<!--\norchestra retry\n-->"],
    ["an unterminated HTML comment", "<!-- orchestra retry\n\nstill hidden"],
    ["an HTML comment, CRLF", "<!--\r\norchestra retry\r\n-->\r\n"],
    ["a quote, then code, then a comment", "> hi\n\n```\norchestra retry\n```\n\n<!-- orchestra hold -->"],
    ["empty", ""],
    ["only blanks", "  \r\n\t\n"],
  ])("%s → empty text", (_name, body) => {
    expect(parseComment(body)).toEqual(text(body, true));
  });

  test.each([
    ["a quote, then prose", "> orchestra retry\n\nI disagree with this change", "I disagree with this change"],
    ["a fence, then prose", "```\norchestra retry\n```\nthat command did nothing", "that command did nothing"],
    ["indented code, then prose", "    orchestra retry\n\nran that, nothing happened", "ran that, nothing happened"],
    ["an HTML comment, then prose on the same line", "<!-- orchestra retry --> please look again", "please look again"],
  ])("%s → text", (_name, body, visible) => {
    expect(parseComment(body)).toEqual(text(body));
    expect(visibleText(body)).toBe(visible);
  });

  test("text keeps the original body (trimmed), quotes and code included", () => {
    const body = "\n> orchestra retry\n\nUse this instead:\n\n```ts\nconst x = 1;\n```\n";
    expect(parseComment(body)).toEqual({ kind: "text", body: body.trim(), isEmpty: false });
  });
});

describe("a command not on the first line is not a command", () => {
  test.each([
    ["prose, then a command", "Please fix the tests.\norchestra retry"],
    ["prose, a blank line, then a command", "Looks wrong to me.\n\norchestra cancel"],
    ["prose, then a quoted command", "I agree with this:\n> orchestra retry"],
    ["prose, then a fenced command", "Run this:\n```\norchestra retry\n```"],
    ["prose with an indented line (paragraph continuation)", "Tried it\n    orchestra retry"],
    ["CRLF prose, then a command", "Please fix the tests.\r\norchestra retry\r\n"],
    ["the command in the middle of a line", "you could write orchestra retry"],
    ["inline code", "`orchestra retry`"],
    ["no space after the word", "orchestra:retry"],
    ["a longer word", "orchestration retry"],
    ["prose that starts with the word", "Orchestra is wrong here: the test is flaky"],
    ["prose that starts with the word, far from any command", "orchestra broke the build again"],
  ])("%s → text", (_name, body) => {
    expect(parseComment(body)).toEqual(text(body));
  });
});

describe("unknown commands", () => {
  test.each([
    ["orchestra frobnicate", "frobnicate", null],
    ["ORCHESTRA Frobnicate", "Frobnicate", null],
    ["/orchestra frobnicate the widget", "frobnicate", null],
    ["/orchestra frobnicate!", "frobnicate", null],
    ["orchestra retyr", "retyr", "retry"],
    ["orchestra verfy phase-2", "verfy", "verify"],
    ["orchestra stauts please", "stauts", "status"],
    ["orchestra frobnicate\r\nmore text", "frobnicate", null],
    ["orchestra", "", null],
    ["/orchestra\n\nsomething", "", null],
  ])("%j → unknown %j", (body, word, near) => {
    const parsed = parseComment(body);
    expect(parsed).toMatchObject({ kind: "unknown", word });
    const message = (parsed as Extract<Parsed, { kind: "unknown" }>).message;
    for (const c of COMMANDS) expect(message).toContain(`\`${c.usage}\``);
    expect(message).toContain("`orchestra help`");
    if (near) expect(message).toContain(`Did you mean \`orchestra ${near}`);
    else expect(message).not.toContain("Did you mean");
  });

  test("a bare `orchestra` followed by prose is a salutation, not a command", () => {
    const body = "Orchestra\n\nthe agent deleted the wrong file";
    expect(parseComment(body)).toEqual(text(body));
  });
});

describe("large bodies", () => {
  test.each([
    ["prose", "a".repeat(65_536)],
    ["a command then a long note", "orchestra retry " + "x ".repeat(32_000)],
    ["an unterminated fence", "```\n" + "orchestra retry\n".repeat(4_000)],
    ["many quote markers", ">".repeat(65_536)],
    ["many unclosed comment openers", "<!--".repeat(16_384)],
    ["many closed comments on one line", "<!---->".repeat(9_000) + "orchestra retry"],
    ["many backticks", "`".repeat(65_536)],
    ["whitespace", " \t".repeat(32_768) + "x"],
    ["many lines", "\r\n".repeat(32_000) + "orchestra hold"],
    ["a long phase id attempt", "orchestra verify " + "a-".repeat(32_000)],
    ["a long unknown word", "orchestra " + "z".repeat(65_000)],
  ])("%s returns", (_name, body) => {
    expect(parseComment(body).kind).toMatch(/^(command|malformed|unknown|text)$/);
  });
});

describe("helpText", () => {
  test.each(["write", "maintain", "admin"])("lists every command and who may use them (%s)", (permission) => {
    const help = helpText(permission);
    for (const c of COMMANDS) {
      expect(help).toContain(`- \`${c.usage}\`: ${c.description}`);
    }
    expect(help).toContain(`${permission} permission or higher`);
    expect(help).toContain("`trust.users`");
  });

  test("every usage in the table parses as its own command", () => {
    for (const c of COMMANDS) {
      const parsed = parseComment(c.usage.replace("<phase-id>", "phase-2"));
      expect(parsed).toMatchObject({ kind: "command", command: c.name });
    }
  });
});
