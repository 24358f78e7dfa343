/** An HTTP token (RFC 9110 §5.6.2): what a header name, a method and a cookie name (RFC 6265) are made of. */
export const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
