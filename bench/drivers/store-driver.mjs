/**
 * A script that turns each HTTP request into one call on its bucket binding, `env.BUCKET`: the
 * load the store benchmarks (bench/store-http.ts, bench/workerd-floor.ts,
 * bench/store-vs-miniflare.ts) and the crash tests (test/e2e/crash.test.ts) put through a real
 * script. Bodies stream both ways; nothing is buffered here.
 *
 *   PUT    /o/<key>                  put(key, body)            answers the new etag
 *   GET    /o/<key>                  get(key)                  the body, or 404
 *   HEAD   /o/<key>                  head(key)                 etag and size headers, or 404
 *   DELETE /o/<key>                  delete(key)               204
 *   GET    /list?prefix=&limit=&cursor=   list(...)            {keys, truncated, cursor}
 *   POST   /mpu/<key>                createMultipartUpload     the upload id
 *   PUT    /mpu/<key>?id=U&part=N    uploadPart(N, body)       the part as JSON
 *   POST   /mpu/<key>?id=U&complete  complete(parts in body)   the object's etag
 */
const OBJECT = '/o/';
const UPLOAD = '/mpu/';

async function object(bucket, method, key, body) {
  if (method === 'PUT') return new Response((await bucket.put(key, body)).etag);
  if (method === 'DELETE') {
    await bucket.delete(key);
    return new Response(null, { status: 204 });
  }
  if (method === 'HEAD') {
    const head = await bucket.head(key);
    // An explicit zero length: load generators that treat HEAD like GET (wrk) then see the end.
    if (head === null) return new Response(null, { status: 404, headers: { 'content-length': '0' } });
    return new Response(null, { headers: { etag: head.httpEtag, 'x-size': String(head.size), 'content-length': '0' } });
  }
  if (method === 'GET') {
    const found = await bucket.get(key);
    if (found === null) return new Response('not found', { status: 404 });
    return new Response(found.body, { headers: { etag: found.httpEtag, 'content-length': String(found.size) } });
  }
  return null;
}

async function list(bucket, query) {
  const listed = await bucket.list({
    prefix: query.get('prefix') ?? undefined,
    limit: Number(query.get('limit') ?? 100),
    cursor: query.get('cursor') ?? undefined,
  });
  return Response.json({ keys: listed.objects.map((o) => o.key), truncated: listed.truncated, cursor: listed.truncated ? listed.cursor : null });
}

async function upload(bucket, request, key, query) {
  const id = query.get('id');
  if (id === null) return request.method === 'POST' ? new Response((await bucket.createMultipartUpload(key)).uploadId) : null;
  const started = bucket.resumeMultipartUpload(key, id);
  if (request.method === 'PUT') return Response.json(await started.uploadPart(Number(query.get('part')), request.body));
  if (request.method === 'POST' && query.has('complete')) return new Response((await started.complete(await request.json())).etag);
  return null;
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const path = decodeURIComponent(url.pathname);
    let answer = null;
    if (path.startsWith(OBJECT)) answer = await object(env.BUCKET, request.method, path.slice(OBJECT.length), request.body);
    else if (path === '/list') answer = await list(env.BUCKET, url.searchParams);
    else if (path.startsWith(UPLOAD)) answer = await upload(env.BUCKET, request, path.slice(UPLOAD.length), url.searchParams);
    return answer ?? new Response("bad request: see the driver's header for its paths", { status: 400 });
  },
};
