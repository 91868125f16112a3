/** The destructive licence actions that ask for confirmation first, with what each page says and where it posts. */
export const CONFIRMATIONS = {
  release: {
    title: 'Release this machine',
    post: 'release',
    button: 'Release the machine',
    consequence: 'The machine loses its seat now; it validates as not activated until it activates again (if a seat is free).',
    reasonRequired: false,
  },
  'release-all': {
    title: 'Release all machines',
    post: 'release',
    button: 'Release all machines',
    consequence: 'Every bound machine loses its seat now; each one validates as not activated until it activates again.',
    reasonRequired: false,
  },
  suspend: {
    title: 'Suspend the licence',
    post: 'suspend',
    button: 'Suspend the licence',
    consequence: 'The licence stops activating and validating until it is reinstated. Bound machines keep their seats.',
    reasonRequired: false,
  },
  revoke: {
    title: 'Revoke the licence',
    post: 'revoke',
    button: 'Revoke the licence',
    consequence:
      'Final: the licence never activates or validates again, and cannot be reinstated. Bound machines stay listed until released.',
    reasonRequired: true,
  },
} as const;

export type ConfirmAction = keyof typeof CONFIRMATIONS;
