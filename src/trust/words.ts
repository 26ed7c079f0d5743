// How a front end tells a person to act: the core's messages name the next step through these, so the CLI says
// `mcp-gate get x` and VS Code says "MCP Gate: Approve…", and no core file spells either front end's wording.
// Each front end passes its own set; without one, the core's messages say what to do without naming a command.
export interface FrontEndWords {
  /** How to look at a waiting server and approve it ("review it …"). */
  review(server: string): string;
  /** How to review and decide every waiting server (the doctor's hint). */
  reviewAll: string;
  /** How to say which file is meant when a name is declared in several. */
  chooseSource: string;
  /** How to use an approval store outside the project. */
  storeOutside: string;
  /** How to set a secret's value. */
  setSecret(name: string): string;
  /** How to see the full report (doctor). */
  doctor: string;
  /** How to see the grants of one server. */
  showGrants(server: string): string;
  /** How to return a rejected server to pending. */
  resetServer(server: string): string;
  /** How to list a server's tools with what the policy says of each. */
  showTools(server: string): string;
}

export const NEUTRAL_WORDS: FrontEndWords = {
  review: () => 'review its definition and approve it',
  reviewAll: 'review each one, then approve or reject it',
  chooseSource: 'name the file that declares it',
  storeOutside: 'use an approval store outside the project',
  setSecret: (n) => `give ${n} a value`,
  doctor: 'see the doctor report',
  showGrants: () => 'shown with the server',
  resetServer: () => 'reset it to return it to pending',
  showTools: () => 'listing its tools',
};
