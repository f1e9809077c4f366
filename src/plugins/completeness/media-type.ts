// Which GraphQL-over-HTTP media type a response will use, decided the way yoga's result processor decides it.

/**
 * True when the response is `application/graphql-response+json`: the first acceptable entry of the
 * Accept header names it. `application/json` or a wildcard first (and no Accept at all) mean
 * `application/json`, where GraphQL over HTTP keeps status 200 for results with errors.
 */
export function respondsWithGraphQLResponseJson(accept: string | null | undefined): boolean {
  for (const entry of (accept || '*/*').toLowerCase().replace(/\s/g, '').split(',')) {
    const [mediaType, ...params] = entry.split(';');
    const charset = params.find((p) => p.startsWith('charset='));
    if (charset && charset !== 'charset=utf-8') continue;
    if (mediaType === 'application/graphql-response+json') return true;
    if (mediaType === 'application/json' || mediaType === 'application/*' || mediaType === '*/*') return false;
  }
  return false;
}

/** The media types yoga's result processors answer in (regular results, then streams), for an Accept check before execution. */
export const ANSWER_MEDIA_TYPES = ['application/graphql-response+json', 'application/json', 'text/event-stream', 'multipart/mixed'] as const;

/**
 * Whether any entry of the Accept header (utf-8 or no charset) matches one of ANSWER_MEDIA_TYPES,
 * wildcards included, as yoga's result processors match them. No Accept header means any.
 */
export function answerableIn(accept: string | null | undefined): boolean {
  for (const entry of (accept || '*/*').toLowerCase().replace(/\s/g, '').split(',')) {
    const [mediaType, ...params] = entry.split(';');
    const charset = params.find((p) => p.includes('charset='));
    if (charset && charset !== 'charset=utf-8') continue;
    const [type, subtype] = mediaType.split('/');
    if (ANSWER_MEDIA_TYPES.some((answer) => {
      const [answerType, answerSubtype] = answer.split('/');
      return (type === '*' || type === answerType) && (subtype === '*' || subtype === answerSubtype);
    })) return true;
  }
  return false;
}
