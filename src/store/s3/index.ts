/** The S3-compatible face of the object store: the request handler and its access keys. */
export { createS3Handler, createS3Listener, type S3HandlerOptions } from './s3-handler.ts';
export { AccessKeys, type BootstrapKey, type NewAccessKey } from './access-keys.ts';
