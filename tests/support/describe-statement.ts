import type pg from "pg";

// PostgreSQL's own description of a statement, without running it: the extended protocol's Parse
// and Describe (statement) messages answer the parameter types and the result columns (names and
// type oids) of the unnamed statement, then Sync. node-postgres runs any object with a `submit`
// method as a query and hands it the backend's messages, which is how this reaches the protocol.

export interface Described {
  params: number[];
  /** tableId/column: where a plain column comes from (0 for an expression) */
  fields: Array<{ name: string; typeOid: number; tableId: number; column: number }>;
}

class Describe {
  private params: number[] = [];
  private fields: Described["fields"] = [];
  private failure?: Error;
  private settle!: { resolve: (d: Described) => void; reject: (e: Error) => void };
  readonly done = new Promise<Described>((resolve, reject) => (this.settle = { resolve, reject }));
  private readonly onParams = (m: { dataTypeIDs: number[] }) => (this.params = m.dataTypeIDs);

  constructor(private readonly text: string) {}

  submit(connection: pg.Connection): void {
    connection.once("parameterDescription", this.onParams);
    // the unnamed statement; the typings' second argument is not read by pg 8
    connection.parse({ name: "", text: this.text, types: [] }, false);
    connection.describe({ type: "S", name: "" }, false);
    connection.sync();
  }

  handleRowDescription(msg: { fields: Array<{ name: string; dataTypeID: number; tableID: number; columnID: number }> }): void {
    this.fields = msg.fields.map((f) => ({ name: f.name, typeOid: f.dataTypeID, tableId: f.tableID, column: f.columnID }));
  }

  handleError(error: Error, connection: pg.Connection): void {
    connection.off("parameterDescription", this.onParams);
    this.failure = error;
    this.settle.reject(error);
  }

  handleReadyForQuery(): void {
    if (!this.failure) this.settle.resolve({ params: this.params, fields: this.fields });
  }

  // a described statement has no rows, no command tag and no portal
  handleDataRow(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
}

/** The parameter and result types PostgreSQL infers for `text`, or its parse error. */
export async function describeStatement(client: pg.Client, text: string): Promise<Described> {
  const d = new Describe(text);
  client.query(d);
  return d.done;
}
