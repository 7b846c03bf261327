// The name of the one policy store object (./policy-store.ts), apart from its class.

export const POLICY_STORE_OBJECT = 'policy';
