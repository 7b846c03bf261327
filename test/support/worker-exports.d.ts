// The Worker's exports, as `exports` from cloudflare:workers gives them to tests in workerd.
declare global {
  namespace Cloudflare {
    interface GlobalProps {
      mainModule: typeof import('../../src/index');
    }
  }
}

export {};
