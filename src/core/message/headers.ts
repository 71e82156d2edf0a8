/** Port: a message's header section as stored, for people reading it (the console's message page). */

export interface MessageHeaders {
  /**
   * SMTP submissions: the header section of the received bytes (unfolded lines kept as they came).
   * HTTP submissions: the fields the client gave (From, To, Subject, its extra headers); the MIME
   * headers are built at each delivery and not stored. Null when the message is not there.
   * Read from the body store for a large body.
   */
  of(tenantId: string, id: string): Promise<{ source: 'smtp' | 'http'; text: string } | null>;
}
