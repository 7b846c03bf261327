// Stands in for `ajv-formats` (format validators for ajv, about 10 KiB minified). It is only
// called on a new Ajv instance, which is never created here: see ajv.ts beside it.

import { leftOut } from './left-out';

export default function addFormats(): never {
  throw leftOut('ajv-formats (addFormats)', 'ajv-formats.ts');
}
