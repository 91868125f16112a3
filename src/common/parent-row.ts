import { applyDecorators } from '@nestjs/common';
import { JoinColumn, ManyToOne, type ObjectType, type RelationOptions } from 'typeorm';

/**
 * The row this one belongs to: `column` holds the parent's id, under the foreign key's name as its migration gives it
 * (every constraint is named; docs/architecture.md, Database style). `onDelete` as that migration declares it.
 */
export const ParentRow = <T>(
  parent: () => ObjectType<T>,
  column: string,
  constraint: string,
  onDelete: RelationOptions['onDelete'] = 'CASCADE',
) =>
  applyDecorators(
    ManyToOne(parent, { onDelete }),
    JoinColumn({ name: column, referencedColumnName: 'id', foreignKeyConstraintName: constraint }),
  );
